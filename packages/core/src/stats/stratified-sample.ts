import { rngFrom, type Rng } from '../rng.js';

/** A stratum: the items of one group (a configuration) and one class (a judge tag), by count. */
export interface Stratum {
  group: string;
  cls: string;
  size: number;
}

/** One item drawn: its stratum (index into the strata given) and its index within the stratum (0 .. size - 1). */
export interface SamplePick {
  stratum: number;
  index: number;
}

export interface StratifiedSample {
  /** The items drawn, in draw order. */
  picked: SamplePick[];
  /** Items drawn per class, and how many the strata hold. */
  perClass: Record<string, { drawn: number; available: number }>;
  groups: number;
}

/**
 * A seeded sample of `n` items that covers every group and oversamples rare classes.
 *
 * 1. Coverage: for each group (in sorted order) one item is drawn, of the class present in that group that
 *    has the fewest items drawn so far (ties: the class rarer over all groups, then by name), uniformly
 *    within the group's stratum of that class.
 * 2. Equal allocation: each further item goes to the class with the fewest items drawn so far among the
 *    classes with items left (ties as above), as a uniformly random remaining item of that class (over all
 *    groups). Classes grow together until a class runs out (water filling), so a class rarer than
 *    n / #classes is taken whole.
 *
 * Items are counted, not listed: a stratum is (group, class, size), and the caller maps a pick back to its
 * item by a stable order within the stratum. Memory is 5 bytes per item (4.7 M items: about 24 MB).
 * Throws RangeError when n is below the number of groups or above the number of items. A pure function of
 * (strata, n, seed).
 */
export function stratifiedSample(strata: readonly Stratum[], n: number, seed: number): StratifiedSample {
  const groups = [...new Set(strata.filter((s) => s.size > 0).map((s) => s.group))].sort();
  const offsets = new Float64Array(strata.length + 1);
  strata.forEach((s, i) => {
    offsets[i + 1] = offsets[i] + s.size;
  });
  const total = offsets[strata.length];
  if (!Number.isInteger(n) || n < groups.length)
    throw new RangeError(`a sample of ${n} cannot hold one item of each of the ${groups.length} groups`);
  if (n > total) throw new RangeError(`a sample of ${n} from ${total} items`);
  const rng = rngFrom(seed, 'stratified-sample');

  const { available, classes } = classesByRarity(strata);
  const drawn = new Map(classes.map((c) => [c, 0]));
  const fewest = (candidates: ReadonlySet<string>) => {
    let best: string | undefined;
    for (const c of classes) if (candidates.has(c) && (best === undefined || drawn.get(c)! < drawn.get(best)!)) best = c;
    return best!;
  };

  const taken = new Uint8Array(total);
  const picked: number[] = [];
  const take = (id: number, cls: string) => {
    taken[id] = 1;
    picked.push(id);
    drawn.set(cls, drawn.get(cls)! + 1);
  };

  for (const g of groups) {
    const present = new Map<string, number>();
    strata.forEach((s, i) => {
      if (s.group === g && s.size > 0) present.set(s.cls, i);
    });
    const c = fewest(new Set(present.keys()));
    const i = present.get(c)!;
    take(offsets[i] + rng.int(strata[i].size), c);
  }

  // Each class's item ids in a seeded random order; filling takes them from the front, skipping ones taken.
  const order = new Map<string, Int32Array | Float64Array>();
  const cursor = new Map(classes.map((c) => [c, 0]));
  const orderOf = (c: string) => {
    let ids = order.get(c);
    if (!ids) {
      ids = shuffledIds(strata, offsets, c, available.get(c)!, rng);
      order.set(c, ids);
    }
    return ids;
  };
  while (picked.length < n) {
    const c = fewest(new Set(classes.filter((x) => drawn.get(x)! < available.get(x)!)));
    const ids = orderOf(c);
    let at = cursor.get(c)!;
    while (taken[ids[at]]) at++;
    cursor.set(c, at + 1);
    take(ids[at], c);
  }

  const perClass: StratifiedSample['perClass'] = {};
  for (const c of [...classes].sort()) perClass[c] = { drawn: drawn.get(c)!, available: available.get(c)! };
  return { picked: picked.map((id) => pickOf(strata, offsets, id)), perClass, groups: groups.length };
}

/** Items per class, and the classes with items in tie order: rarer first, then by name (the first minimum in this order wins a tie). */
function classesByRarity(strata: readonly Stratum[]): { available: Map<string, number>; classes: string[] } {
  const available = new Map<string, number>();
  for (const s of strata) available.set(s.cls, (available.get(s.cls) ?? 0) + s.size);
  const classes = [...available.keys()]
    .filter((c) => available.get(c)! > 0)
    .sort((a, b) => available.get(a)! - available.get(b)! || a.localeCompare(b));
  return { available, classes };
}

/** The item ids of class `c` (`count` of them) in a seeded random order (a Fisher-Yates shuffle drawing from `rng`). */
function shuffledIds(strata: readonly Stratum[], offsets: Float64Array, c: string, count: number, rng: Rng): Int32Array | Float64Array {
  const total = offsets[strata.length];
  const ids = total < 2 ** 31 ? new Int32Array(count) : new Float64Array(count);
  let k = 0;
  strata.forEach((s, i) => {
    if (s.cls === c) for (let j = 0; j < s.size; j++) ids[k++] = offsets[i] + j;
  });
  for (let j = ids.length - 1; j > 0; j--) {
    const r = rng.int(j + 1);
    const t = ids[j];
    ids[j] = ids[r];
    ids[r] = t;
  }
  return ids;
}

/** The stratum and index within it of item `id`. */
function pickOf(strata: readonly Stratum[], offsets: Float64Array, id: number): SamplePick {
  let lo = 0;
  let hi = strata.length - 1;
  // the last stratum whose offset is <= id (empty strata share an offset with the next one)
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid] <= id) lo = mid;
    else hi = mid - 1;
  }
  while (strata[lo].size === 0 || id >= offsets[lo] + strata[lo].size) lo++;
  return { stratum: lo, index: id - offsets[lo] };
}
