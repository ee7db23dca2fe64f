import { z } from 'zod';

/**
 * Temperatures chosen adaptively (docs/DESIGN.md#adaptive-temperatures): `start` temperatures evenly over
 * `range`, then `rounds` rounds, each adding `add` temperatures where the `target` is least resolved, decided
 * from the finished runs of each configuration group (adaptive.ts states the rule).
 */
export const adaptiveTemperaturesSchema = z.strictObject({
  /** [lo, hi]: the start grid spans it, ends included; added temperatures stay inside it. */
  range: z.tuple([z.number().nonnegative(), z.number().nonnegative()]).refine(([lo, hi]) => lo < hi, {
    message: 'range must be [lo, hi] with lo < hi',
    params: { fix: 'write the lower temperature first, e.g. [0.5, 3]' },
  }),
  /** Temperatures of the first round, evenly spaced over range (at least 3: a peak needs a point on each side). */
  start: z.int().min(3).max(1000),
  /** Temperatures added after each round. */
  add: z.int().min(1).max(1000),
  /** Rounds after the first: the grid ends with at most start + add x rounds temperatures. */
  rounds: z.int().min(1).max(100),
  /**
   * What the added temperatures resolve: chi-peak (the factual spin's susceptibility, largest size),
   * binder-crossing (its Binder cumulants of the two largest sizes), rho-min (the lowest hallucination rate, largest size).
   */
  target: z.enum(['chi-peak', 'binder-crossing', 'rho-min']),
});

export type AdaptiveTemperatures = z.infer<typeof adaptiveTemperaturesSchema>;

/** A fixed list, or {adaptive: {...}}. */
export function temperaturesSchema<T extends z.ZodType<number[]>>(list: T) {
  return z.union([list, z.strictObject({ adaptive: adaptiveTemperaturesSchema })]);
}

/** Temperatures carry at most this many decimals (config ids carry them): added ones are rounded to it. */
export const TEMPERATURE_DECIMALS = 6;

export function roundTemperature(t: number): number {
  return Number(t.toFixed(TEMPERATURE_DECIMALS));
}

/** The first round's grid: `start` temperatures evenly over range, ends included, rounded. */
export function startGrid(a: AdaptiveTemperatures): number[] {
  const [lo, hi] = a.range;
  const out: number[] = [];
  for (let i = 0; i < a.start; i++) {
    const t = roundTemperature(lo + ((hi - lo) * i) / (a.start - 1));
    if (out.at(-1) !== t) out.push(t);
  }
  return out;
}

/** The most temperatures a configuration group can end with (what `panta plan` counts). */
export function maxTemperatureCount(temperatures: number[] | { adaptive: AdaptiveTemperatures }): number {
  if (Array.isArray(temperatures)) return temperatures.length;
  const a = temperatures.adaptive;
  return startGrid(a).length + a.add * a.rounds;
}

/** Every temperature the spec names up front: the list, or the adaptive range's ends (backend limits check these). */
export function boundingTemperatures(temperatures: number[] | { adaptive: AdaptiveTemperatures }): number[] {
  return Array.isArray(temperatures) ? temperatures : [...temperatures.adaptive.range];
}
