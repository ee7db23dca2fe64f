import { rngFrom, type Rng } from '../rng.js';

/** One item that can be drawn: its stratum of coverage (a configuration) and its class (a judge tag). */
export interface SampleItem {
  group: string;
  cls: string;
}

export interface StratifiedSample {
  /** Indices into the items, in draw order. */
  picked: number[];
  /** Items drawn per class, and how many the pool had. */
  perClass: Record<string, { drawn: number; available: number }>;
  groups: number;
}

/**
 * A seeded sample of `n` items that covers every group and oversamples rare classes.
 *
 * 1. Coverage: for each group (in sorted order) one item is drawn, of the class present in that group that
 *    has the fewest items drawn so far (ties: the class rarer in the pool, then by name).
 * 2. Equal allocation: each further item goes to the class with the fewest items drawn so far among the
 *    classes with items left (ties as above), as a uniformly random remaining item of that class. Classes
 *    grow together until a class runs out (water filling), so a class rarer than n / #classes is taken whole.
 *
 * Throws when n is below the number of groups or above the number of items (the caller reports it).
 * A pure function of (items, n, seed).
 */
export function stratifiedSample(items: readonly SampleItem[], n: number, seed: number): StratifiedSample {
  const groups = [...new Set(items.map((it) => it.group))].sort();
  if (!Number.isInteger(n) || n < groups.length)
    throw new RangeError(`a sample of ${n} cannot hold one item of each of the ${groups.length} groups`);
  if (n > items.length) throw new RangeError(`a sample of ${n} from ${items.length} items`);
  const rng = rngFrom(seed, 'stratified-sample');
  // Each class's items in a seeded random order; drawing takes them from the front, skipping ones taken.
  const byClass = new Map<string, number[]>();
  for (let i = 0; i < items.length; i++) {
    const c = items[i].cls;
    const list = byClass.get(c);
    if (list) list.push(i);
    else byClass.set(c, [i]);
  }
  for (const list of byClass.values()) shuffle(list, rng);
  const classes = [...byClass.keys()].sort((a, b) => byClass.get(a)!.length - byClass.get(b)!.length || a.localeCompare(b));
  const drawn = new Map(classes.map((c) => [c, 0]));
  const taken = new Uint8Array(items.length);
  const cursor = new Map(classes.map((c) => [c, 0]));
  const picked: number[] = [];
  const take = (i: number) => {
    taken[i] = 1;
    picked.push(i);
    drawn.set(items[i].cls, drawn.get(items[i].cls)! + 1);
  };
  // `classes` is already in tie order (rarer first, then name), so the first minimum wins the tie.
  const fewest = (candidates: readonly string[]) => {
    let best: string | undefined;
    for (const c of classes) if (candidates.includes(c) && (best === undefined || drawn.get(c)! < drawn.get(best)!)) best = c;
    return best;
  };

  const byGroupClass = new Map<string, number[]>();
  for (const c of classes) {
    for (const i of byClass.get(c)!) {
      const key = `${items[i].group}\u0000${c}`;
      const list = byGroupClass.get(key);
      if (list) list.push(i);
      else byGroupClass.set(key, [i]);
    }
  }
  for (const g of groups) {
    const present = classes.filter((c) => byGroupClass.has(`${g}\u0000${c}`));
    const c = fewest(present)!;
    // The first of the group's items in the class's shuffled order: uniformly random within the group.
    take(byGroupClass.get(`${g}\u0000${c}`)![0]);
  }
  while (picked.length < n) {
    const left = classes.filter((c) => drawn.get(c)! < byClass.get(c)!.length);
    const c = fewest(left)!;
    const list = byClass.get(c)!;
    let at = cursor.get(c)!;
    while (taken[list[at]]) at++;
    cursor.set(c, at + 1);
    take(list[at]);
  }
  const perClass: StratifiedSample['perClass'] = {};
  for (const c of [...classes].sort()) perClass[c] = { drawn: drawn.get(c)!, available: byClass.get(c)!.length };
  return { picked, perClass, groups: groups.length };
}

/** Fisher-Yates, in place. */
export function shuffle<T>(xs: T[], rng: Rng): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}
