import type { EncoderColumn, Whitening } from '@panta/core';
import { shardPath } from '../corpus-paths.js';
import { measureRunShard, measuredCache, type OrderParamRow } from './order-params-io.js';
import { fitShardWhitening, writeWhitening } from './whitening-io.js';

/** What the measurement needs of a run. */
export interface MeasuredRun {
  runId: string;
  configId: string;
  n: number;
  promptId: string;
}

export interface SweepMeasurement {
  whitenings: Map<string, Map<string, Whitening>>;
  orderParams: OrderParamRow[];
}

/**
 * The order-parameter service's final pass: per prompt, a whitening per encoder fitted on every t = 0 answer
 * of that prompt across the sweep, then each run's order parameters. With `write`, whitening files are
 * written; verify calls it without, to recompute and compare.
 */
export async function measureSweep(
  out: string,
  runs: readonly MeasuredRun[],
  encoders: readonly EncoderColumn[],
  mode: 'zca' | 'raw',
  write: boolean,
): Promise<SweepMeasurement> {
  const byPrompt = new Map<string, MeasuredRun[]>();
  for (const r of runs) byPrompt.set(r.promptId, [...(byPrompt.get(r.promptId) ?? []), r]);
  const whitenings = new Map<string, Map<string, Whitening>>();
  const orderParams: OrderParamRow[] = [];
  for (const [promptId, promptRuns] of byPrompt) {
    const files = promptRuns.map((r) => shardPath(out, r.runId));
    const perEncoder = new Map<string, Whitening>();
    for (const e of encoders) {
      const w = await fitShardWhitening(files, e, mode);
      if (write) await writeWhitening(out, promptId, e.name, w);
      perEncoder.set(e.name, w);
    }
    whitenings.set(promptId, perEncoder);
    const caches = new Map([...perEncoder].map(([name, w]) => [name, measuredCache(w)]));
    // A few runs at once: while one waits for DuckDB to read its shard, another computes.
    const results: OrderParamRow[][] = new Array(promptRuns.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < promptRuns.length; i = next++) results[i] = await measureRunShard(shardPath(out, promptRuns[i]!.runId), promptRuns[i]!, encoders, caches);
    };
    await Promise.all(Array.from({ length: Math.min(3, promptRuns.length) }, worker));
    for (const r of results) orderParams.push(...r);
  }
  return { whitenings, orderParams };
}
