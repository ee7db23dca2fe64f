import type { EncoderColumn, Whitening } from '@panta/core';
import { shardPath } from '../corpus-paths.js';
import { measureRunShard, measureRunTrace, measuredCache, type Measured, type OrderParamRow } from './order-params-io.js';
import type { SealedRun, SweepTrace } from './sweep-trace.js';
import { copyWhitening, fitShardWhitening, readWhitening, writeWhitening } from './whitening-io.js';

/**
 * How a sweep's whitening is had: fitted here (zca, or raw), or read from the whitening files of another
 * corpus folder (`from`, absolute), so that corpora measured with one whitening compare.
 */
export type WhiteningMode = 'zca' | 'raw' | { from: string };

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
 * of that prompt across the sweep (every arm alike: one basis per prompt and encoder), or read from another
 * corpus (`{from}`), then each run's order parameters. With `write`, whitening files are written (copied,
 * with `from`); verify calls it without, to recompute and compare. With `trace`, runs it holds sealed are measured
 * from memory instead of their shards (see SweepTrace); the numbers are the same either way.
 */
export async function measureSweep(
  out: string,
  runs: readonly MeasuredRun[],
  encoders: readonly EncoderColumn[],
  mode: WhiteningMode,
  write: boolean,
  trace?: SweepTrace,
): Promise<SweepMeasurement> {
  // A trace of other encoders (or another order) cannot stand in for these columns.
  const usable =
    trace && trace.encoders.map((e) => `${e.name}:${e.dim}`).join() === encoders.map((e) => `${e.name}:${e.dim}`).join()
      ? trace
      : undefined;
  const byPrompt = new Map<string, MeasuredRun[]>();
  for (const r of runs) byPrompt.set(r.promptId, [...(byPrompt.get(r.promptId) ?? []), r]);
  const whitenings = new Map<string, Map<string, Whitening>>();
  const orderParams: OrderParamRow[] = [];
  for (const [promptId, promptRuns] of byPrompt) {
    const files = promptRuns.map((r) => shardPath(out, r.runId));
    const sealed = new Map<string, SealedRun>();
    for (const r of promptRuns) {
      const s = usable?.sealed(r.runId);
      if (s) sealed.set(shardPath(out, r.runId), s);
    }
    const perEncoder = new Map<string, Whitening>();
    for (let e = 0; e < encoders.length; e++) {
      const encoder = encoders[e];
      const traced = (file: string) => {
        const s = sealed.get(file);
        return s && sweepZero(s, usable!.vectors(promptId, e), e);
      };
      const w =
        typeof mode === 'object'
          ? await givenWhitening(mode.from, promptId, encoder)
          : await fitShardWhitening(files, encoder, mode, traced);
      if (write && typeof mode === 'object') await copyWhitening(mode.from, out, promptId, encoder.name);
      else if (write) await writeWhitening(out, promptId, encoder.name, w);
      perEncoder.set(encoder.name, w);
    }
    whitenings.set(promptId, perEncoder);
    const caches = new Map([...perEncoder].map(([name, w]) => [name, measuredCache(w)]));
    const byId: Measured[][] = encoders.map(() => []);
    const ordered = encoders.map((e) => perEncoder.get(e.name)!);
    // A few runs at once: while one waits for DuckDB to read its shard, another computes.
    const results: OrderParamRow[][] = new Array(promptRuns.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < promptRuns.length; i = next++) {
        const run = promptRuns[i];
        const s = sealed.get(shardPath(out, run.runId));
        results[i] = s
          ? measureRunTrace(s, (e) => usable!.vectors(promptId, e), run, encoders, ordered, byId)
          : await measureRunShard(shardPath(out, run.runId), run, encoders, caches);
      }
    };
    await Promise.all(Array.from({ length: Math.min(3, promptRuns.length) }, worker));
    // One push per row: spreading a run of more than ~100,000 sweeps would overflow the call stack.
    for (const r of results) for (const row of r) orderParams.push(row);
  }
  return { whitenings, orderParams };
}

/** Another corpus's whitening of (prompt, encoder); its dimension is checked before a sweep starts, and again here. */
async function givenWhitening(from: string, promptId: string, encoder: EncoderColumn): Promise<Whitening> {
  const w = await readWhitening(from, promptId, encoder.name);
  if (w.dim !== encoder.dim)
    throw new Error(`the whitening of ${promptId}/${encoder.name} in ${from} has dimension ${w.dim}, the encoder ${encoder.dim}`);
  return w;
}

/** A sealed run's t = 0 answers' vectors of encoder e, in event order (as `WHERE sweep = 0` reads them). */
function* sweepZero(run: SealedRun, vectors: readonly Float32Array[], e: number): Generator<Float32Array> {
  const ids = run.vectorIds(e);
  for (let i = 0; i < run.length; i++) if (run.sweeps[i] === 0) yield vectors[ids[i]];
}
