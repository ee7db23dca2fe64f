import { type AdaptivePlanInput, replayGrids } from './adaptive-grids.js';
import type { Manifest } from './manifest.js';

/**
 * Adaptive temperatures: every round replayed from the corpus's own runs (the rule of core's adaptive.ts) must
 * reach the grids the manifest records, group by group; a grid edited in the manifest, or runs whose answers
 * changed, are named.
 */
export async function checkAdaptiveGrids(out: string, manifest: Manifest, plan: AdaptivePlanInput): Promise<string[]> {
  const recorded = manifest.adaptive?.grids;
  if (!recorded) return ['manifest.json has no adaptive.grids although its spec has adaptive temperatures: re-run the sweep to finish it'];
  const replayed = await replayGrids(out, plan);
  const problems: string[] = [];
  for (const g of new Set([...Object.keys(recorded), ...replayed.keys()])) {
    const [a, b] = [JSON.stringify(recorded[g] ?? null), JSON.stringify(replayed.get(g) ?? null)];
    if (a !== b)
      problems.push(
        `adaptive.grids["${g}"] in manifest.json is ${a}, but the rounds replayed from the runs reach ${b}: re-run the sweep into a new folder`,
      );
  }
  return problems;
}
