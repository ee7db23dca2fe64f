import { MAX_AGENTS } from './graph.js';
import { geometryLabel, type GeometrySpec } from './spec.js';

/** Integer L with L^p <= n < (L + 1)^p. */
export function intRoot(n: number, p: 2 | 3): number {
  let l = Math.floor(p === 2 ? Math.sqrt(n) : Math.cbrt(n));
  while ((l + 1) ** p <= n) l++;
  while (l > 0 && l ** p > n) l--;
  return l;
}

function nearest(sizes: number[]): string {
  const unique = [...new Set(sizes)].filter((s) => s >= 1 && s <= MAX_AGENTS).sort((a, b) => a - b);
  if (unique.length === 1) return `nearest valid size is ${unique[0]}`;
  return `nearest valid sizes are ${unique.join(' and ')}`;
}

function tooSmall(n: number, label: string, rule: string, min: number): string {
  return `N = ${n} is too small for ${label} (${rule}): ${nearest([min])}`;
}

/** Sizes N^(1/p) = L >= minL: the valid sizes on either side of n. */
function latticeCheck(n: number, label: string, p: 2 | 3): string | null {
  const rule = p === 2 ? 'N = L^2' : 'N = L^3';
  const minL = 3;
  const l = intRoot(n, p);
  if (l < minL) return `N = ${n} does not fit ${label} (${rule}, L >= ${minL}): ${nearest([minL ** p])}`;
  if (l ** p === n) return null;
  return `N = ${n} does not fit ${label} (${rule}): ${nearest([l ** p, (l + 1) ** p])}`;
}

/**
 * Null when a population of `n` agents fits the geometry, else a one-line message naming the nearest valid
 * sizes (e.g. "N = 10 does not fit torus2d (N = L^2): nearest valid sizes are 9 and 16"). For `edges` the
 * size comes from the file, so only n >= 2 is checked here.
 */
export function checkSize(spec: GeometrySpec, n: number): string | null {
  const label = geometryLabel(spec);
  if (!Number.isInteger(n) || n < 1) return `N must be a positive integer, got ${n}`;
  if (n > MAX_AGENTS) return `N = ${n} is too large: at most ${MAX_AGENTS} agents`;
  switch (spec.kind) {
    case 'ring':
      return n >= 3 ? null : tooSmall(n, label, 'N >= 3', 3);
    case 'torus2d':
      return latticeCheck(n, label, 2);
    case 'torus3d':
      return latticeCheck(n, label, 3);
    case 'meanfield':
      if (spec.sample === undefined) return n >= 2 ? null : tooSmall(n, label, 'N >= 2', 2);
      return n >= spec.sample + 1 ? null : tooSmall(n, label, `sample k = ${spec.sample} needs N >= k + 1`, spec.sample + 1);
    case 'chain':
      return n >= 2 ? null : tooSmall(n, label, 'N >= 2', 2);
    case 'star':
      return n >= 3 ? null : tooSmall(n, label, 'N >= 3', 3);
    case 'random-regular': {
      const k = spec.k;
      // k odd needs N even; k + 1 is then even, so it is always the smallest valid size.
      if (n <= k) return tooSmall(n, label, `N > k = ${k} and N * k even`, k + 1);
      if ((n * k) % 2 !== 0) {
        const valid = [n + 1];
        if (n - 1 > k) valid.unshift(n - 1);
        return `N = ${n} does not fit ${label} (N * k must be even, k = ${k}): ${nearest(valid)}`;
      }
      return null;
    }
    case 'small-world':
      return n > spec.k + 1 ? null : tooSmall(n, label, `N > k + 1 = ${spec.k + 1}`, spec.k + 2);
    case 'edges':
      return n >= 2 ? null : tooSmall(n, label, 'N >= 2', 2);
  }
}

/** Nominal degree k of a geometry at size n (for `edges`, the maximum degree is only known from the file). */
export function nominalDegree(spec: Exclude<GeometrySpec, { kind: 'edges' }>, n: number): number {
  switch (spec.kind) {
    case 'ring':
      return 2;
    case 'torus2d':
      return 4;
    case 'torus3d':
      return 6;
    case 'meanfield':
      return spec.sample ?? n - 1;
    case 'chain':
      return 1;
    case 'star':
      return n - 1;
    case 'random-regular':
    case 'small-world':
      return spec.k;
  }
}
