import { binderCumulant, susceptibility } from './phase/moments.js';
import { plateauOf } from './phase/plateau.js';
import { adaptiveGroup, type RunPlan } from './plan.js';
import { groupPartition, type Shard, shardPartition } from './spec/shard.js';
import type { SweepSpec } from './spec/schema.js';
import { type AdaptiveTemperatures, roundTemperature, startGrid } from './spec/temperatures.js';

/**
 * Adaptive temperatures (docs/DESIGN.md#adaptive-temperatures). A configuration group is every run that
 * differs only in size, temperature and trial (one prompt, geometry, protocol, dynamics and arm): each group
 * has its own grid. Round 0 runs the start grid; after each round the group's grid gains `add` temperatures
 * from the finished runs of the group alone, so a part of a job array that holds the group (parts deal whole
 * groups) and a resumed sweep reach the same grid as an uninterrupted one.
 *
 * The rule reads the judge's tags, not the embeddings (m's whitening is fitted on the finished corpus, which
 * the rounds are still adding to): per snapshot after sweep t, the factual spin f = (correct - hallucinated) / N
 * and rho = hallucinated / N, over the plateau (phase/plateau.ts) of every trial. With the heat-bath Ising
 * surrogate |f| is exactly the magnetisation m. Per target, on the current grid:
 * - chi-peak: chi = N (<|f|^2> - <|f|>^2) of the largest size; the point is its maximum;
 * - rho-min: the mean rho of the largest size; the point is its minimum;
 * - binder-crossing: D = U_L - U_L' (Binder cumulants of f, n = 1, of the two largest sizes); the bracket is the
 *   pair of neighbouring temperatures where D falls through zero (positive, then zero or negative) most steeply,
 *   else the point is where |D| is smallest.
 * The bracket of a point is its two neighbours on the grid (one side at a grid end). Then, `add` times, the
 * widest gap inside the bracket is halved (the lower one on ties), rounded to TEMPERATURE_DECIMALS; a halving
 * that rounds onto a grid temperature ends the round early. Values that cannot be computed (no sample) never
 * win. Ties go to the lower temperature.
 */

/** A finished run's snapshots, indexed by sweep 0..T: the factual spin f and rho. */
export interface RunSeries {
  n: number;
  temperature: number;
  f: readonly number[];
  rho: readonly number[];
}

/** What one round decided for a group: the temperatures it added, and the grid point or bracket it refined. */
export interface AdaptiveStep {
  added: number[];
  bracket: [number, number];
}

/** Per temperature of the grid, the plateau samples of each trial of one size. */
function plateaus(runs: readonly RunSeries[], n: number, grid: readonly number[], pick: (r: RunSeries) => readonly number[]): number[][][] {
  return grid.map((t) => runs.filter((r) => r.n === n && r.temperature === t).map((r) => plateauOf(pick(r) as number[])));
}

/** The index of the best value (max or min), ties to the lower index; -1 when none is a number. */
function best(values: readonly (number | null)[], kind: 'max' | 'min'): number {
  let at = -1;
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) return;
    if (at < 0 || (kind === 'max' ? v > values[at]! : v < values[at]!)) at = i;
  });
  return at;
}

/** The bracket [lo index, hi index] the target says to refine. */
function bracketOf(grid: readonly number[], runs: readonly RunSeries[], target: AdaptiveTemperatures['target']): [number, number] {
  const sizes = [...new Set(runs.map((r) => r.n))].sort((a, b) => b - a);
  const around = (i: number): [number, number] => [Math.max(0, i - 1), Math.min(grid.length - 1, i + 1)];
  const largest = sizes[0] ?? 0;
  if (target === 'chi-peak') {
    const abs = plateaus(runs, largest, grid, (r) => r.f.map(Math.abs));
    return around(
      Math.max(
        0,
        best(
          abs.map((s) => susceptibility(s, largest)),
          'max',
        ),
      ),
    );
  }
  if (target === 'rho-min') {
    const rho = plateaus(runs, largest, grid, (r) => r.rho);
    const means = rho.map((s) => {
      const all = s.flat();
      return all.length > 0 ? all.reduce((a, b) => a + b, 0) / all.length : null;
    });
    return around(Math.max(0, best(means, 'min')));
  }
  const [a, b] = [plateaus(runs, sizes[0] ?? 0, grid, (r) => r.f), plateaus(runs, sizes[1] ?? 0, grid, (r) => r.f)];
  const d = grid.map((_, i) => {
    const [ua, ub] = [binderCumulant(a[i]!, 1), binderCumulant(b[i]!, 1)];
    return ua === null || ub === null ? null : ua - ub;
  });
  // The larger size orders more sharply: U_L - U_L' falls through zero at the transition. Deep in the ordered
  // phase both are near 2/3 and their difference changes sign by noise, in small steps: the steepest fall wins.
  const falls = d.slice(0, -1).map((x, i) => {
    const y = d[i + 1];
    return x !== null && y !== null && x > 0 && y <= 0 ? x - y : null;
  });
  const fall = best(falls, 'max');
  if (fall >= 0) return [fall, fall + 1];
  return around(
    Math.max(
      0,
      best(
        d.map((v) => (v === null ? null : Math.abs(v))),
        'min',
      ),
    ),
  );
}

/**
 * One round of the rule above for one group: `grid` its temperatures so far (any order), `runs` every finished
 * run of the group. Returns the temperatures to add (possibly fewer than `add`) and the bracket refined.
 */
export function nextTemperatures(grid: readonly number[], runs: readonly RunSeries[], a: AdaptiveTemperatures): AdaptiveStep {
  const sorted = [...grid].sort((x, y) => x - y);
  const [i, j] = bracketOf(sorted, runs, a.target);
  const points = sorted.slice(i, j + 1);
  const added: number[] = [];
  for (let k = 0; k < a.add && points.length > 1; k++) {
    let wide = 0;
    for (let g = 1; g + 1 < points.length; g++) if (points[g + 1]! - points[g]! > points[wide + 1]! - points[wide]!) wide = g;
    const t = roundTemperature((points[wide]! + points[wide + 1]!) / 2);
    if (t <= points[wide]! || t >= points[wide + 1]!) break;
    points.splice(wide + 1, 0, t);
    added.push(t);
  }
  return { added, bracket: [sorted[i]!, sorted[j]!] };
}

/** A run's configuration group (adaptiveGroup of its prompt, geometry, protocol, dynamics and arms). */
export function runGroup(run: Pick<RunPlan, 'prompt' | 'geometryLabel' | 'protocol' | 'dynamics' | 'arms'>): string {
  return adaptiveGroup(run.prompt.id, run.geometryLabel, run.protocol, run.dynamics, run.arms);
}

/**
 * The part (0-based) of every run of a sweep's job array: shardPartition's, or with adaptive temperatures
 * groupPartition's (whole groups, weighed by their start grid's runs).
 */
export function sweepPartition(spec: SweepSpec, runs: readonly RunPlan[], count: number, weigh: (run: RunPlan) => number): Uint32Array {
  if (Array.isArray(spec.temperatures)) return shardPartition(runs, count, weigh);
  const start = new Set(startGrid(spec.temperatures.adaptive));
  return groupPartition(runs, count, weigh, runGroup, (r) => start.has(r.temperature));
}

/** The runs of part `shard.index` (sweepPartition), in grid order. */
export function sweepShardRuns(spec: SweepSpec, runs: readonly RunPlan[], shard: Shard, weigh: (run: RunPlan) => number): RunPlan[] {
  if (shard.count === 1) return [...runs];
  const part = sweepPartition(spec, runs, shard.count, weigh);
  return runs.filter((_, i) => part[i] === shard.index - 1);
}

/**
 * Grids with the most temperatures each group can reach (start + add x rounds), for `panta plan`'s maximum
 * cost: the start grid and placeholder temperatures (a run's cost does not depend on its temperature). Empty
 * for a fixed list.
 */
export function maximalGrids(spec: SweepSpec, runs: readonly RunPlan[]): Map<string, number[]> {
  const grids = new Map<string, number[]>();
  if (Array.isArray(spec.temperatures)) return grids;
  const a = spec.temperatures.adaptive;
  const start = startGrid(a);
  // Placeholders above the range, distinct from every start temperature.
  const all = [...start, ...Array.from({ length: a.add * a.rounds }, (_, j) => a.range[1] + j + 1)];
  for (const r of runs) grids.set(runGroup(r), all);
  return grids;
}
