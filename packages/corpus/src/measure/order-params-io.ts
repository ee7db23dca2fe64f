import { TAGS, measureSnapshot, toSpin, unitVector, type EncoderColumn, type Tag, type Whitening } from '@panta/core';
import { readEvents } from '../event-reader.js';
import { defineTable, type RowOf } from '../table.js';
import { VectorCache } from './keyed.js';
import type { SealedRun } from './sweep-trace.js';

/**
 * order_params.parquet (docs/DESIGN.md#tables): one row per (run, sweep, encoder), the order parameters of the
 * snapshot after sweep t. rho and delta rho are null where undefined (no answer tagged correct or wrong).
 */
export const ORDER_PARAMS_TABLE = defineTable('order_params', [
  { name: 'run_id', type: 'VARCHAR', meaning: 'identifier of the run (prompt, geometry, N, temperature, protocol, trial)' },
  { name: 'config_id', type: 'VARCHAR', meaning: 'identifier of the run configuration, shared by its trials' },
  { name: 'sweep', type: 'INTEGER', meaning: 'sweep index (one sweep = N events)' },
  { name: 'encoder', type: 'VARCHAR', meaning: 'sentence encoder the spins come from' },
  { name: 'magnetisation', type: 'DOUBLE', meaning: 'magnetisation m: norm of the mean spin (dimensionless, 0..1)' },
  { name: 'cohesion', type: 'DOUBLE', meaning: 'cohesion q: mean pairwise cosine of spins (dimensionless, -1..1)' },
  { name: 'rho', type: 'DOUBLE', nullable: true, meaning: 'rho = #hallucinated / (#correct + #hallucinated); NULL when both are 0' },
  { name: 'delta_rho', type: 'DOUBLE', nullable: true, meaning: 'rho minus rho at t = 0' },
  { name: 'n_correct', type: 'INTEGER', meaning: 'answers tagged correct (count)' },
  { name: 'n_hallucinated', type: 'INTEGER', meaning: 'answers tagged hallucinated (count)' },
  { name: 'n_not_known', type: 'INTEGER', meaning: 'answers tagged not_known (count)' },
  { name: 'n_judge_failure', type: 'INTEGER', meaning: 'answers tagged judge_failure (count)' },
  { name: 'cds_sys', type: 'DOUBLE', meaning: 'system-level ssvp divergence (CDS) of the snapshot' },
]);

/** One row of order_params.parquet. */
export type OrderParamRow = RowOf<typeof ORDER_PARAMS_TABLE>;

/** An answer's embedding as the order parameters use it: its spin and its raw direction. */
export interface Measured {
  spin: Float64Array;
  unit: Float64Array;
}

/**
 * Distinct embeddings measured once per (prompt, encoder): runs of a prompt share their answers' vectors,
 * and with them this cache (a whitening is per prompt and encoder too).
 */
export function measuredCache(whitening: Whitening): VectorCache<Measured> & { whitening: Whitening } {
  return Object.assign(new VectorCache<Measured>(), { whitening });
}

/**
 * Order parameters of one run for every sweep t and encoder, on snapshot(t): each agent's latest answer
 * after sweep t (carry forward). Answers are added in event order (checked); after a sweep's last event the
 * snapshot's rows are added to `rows`.
 */
export class RunMeasurer {
  readonly rows: OrderParamRow[] = [];
  private expected = 0;
  private readonly tags: Tag[];
  private readonly spins: Float64Array[][];
  private readonly units: Float64Array[][];
  private readonly rho0: (number | null | undefined)[];

  constructor(
    private readonly run: { runId: string; configId: string; n: number },
    private readonly encoders: readonly EncoderColumn[],
  ) {
    this.tags = new Array<Tag>(run.n).fill('not_known');
    this.spins = encoders.map(() => new Array<Float64Array>(run.n));
    this.units = encoders.map(() => new Array<Float64Array>(run.n));
    this.rho0 = encoders.map(() => undefined);
  }

  /** Event `event`: `agent` answered in `sweep`, judged `tag`, measured[e] per encoder. */
  add(event: number, sweep: number, agent: number, tag: Tag, measured: ArrayLike<Measured>): void {
    const { run } = this;
    if (event !== this.expected) throw new Error(`${run.runId}: expected event ${this.expected}, found ${event}`);
    this.expected++;
    this.tags[agent] = tag;
    for (let e = 0; e < this.encoders.length; e++) {
      this.spins[e][agent] = measured[e].spin;
      this.units[e][agent] = measured[e].unit;
    }
    if (event % run.n !== run.n - 1) return;
    for (let e = 0; e < this.encoders.length; e++) {
      const encoder = this.encoders[e];
      const m = measureSnapshot(this.spins[e], this.units[e], this.tags, encoder.dim);
      if (sweep === 0) this.rho0[e] = m.rho;
      const base = this.rho0[e] ?? null;
      this.rows.push({
        run_id: run.runId,
        config_id: run.configId,
        sweep,
        encoder: encoder.name,
        ...m,
        delta_rho: m.rho !== null && base !== null ? m.rho - base : null,
      });
    }
  }
}

/**
 * A run's order parameters read back from its shard (or parts, in event order); spins are computed once per
 * distinct embedding, in `caches` (one per encoder, keyed by name; see measuredCache).
 */
export async function measureRunShard(
  files: string | readonly string[],
  run: { runId: string; configId: string; n: number },
  encoders: readonly EncoderColumn[],
  caches: ReadonlyMap<string, ReturnType<typeof measuredCache>>,
): Promise<OrderParamRow[]> {
  const measurer = new RunMeasurer(run, encoders);
  const state = encoders.map((e) => ({ dim: e.dim, column: `emb_${e.name}`, cache: caches.get(e.name)! }));
  const measured = new Array<Measured>(encoders.length);
  const columns = ['event', 'sweep', 'agent', 'tag', ...state.map((s) => s.column)];
  for await (const batch of readEvents(typeof files === 'string' ? [files] : [...files], { columns, where: "role = 'agent'" })) {
    const events = batch.columns.event as number[];
    const sweeps = batch.columns.sweep as number[];
    const agents = batch.columns.agent as number[];
    const tags = batch.columns.tag as Tag[];
    const vectors = state.map((s) => batch.columns[s.column] as Float32Array);
    for (let r = 0; r < batch.rows; r++) {
      for (let e = 0; e < state.length; e++) {
        const s = state[e];
        measured[e] = s.cache.getAt(vectors[e], r * s.dim, s.dim, (raw) => measure(s.cache.whitening, raw));
      }
      measurer.add(events[r], sweeps[r], agents[r], tags[r], measured);
    }
  }
  return measurer.rows;
}

/**
 * A run's order parameters from its sealed trace (see SweepTrace): the same answers in the same order as
 * its shard holds, so the same rows bit for bit. `byId[e][id]` memoises the prompt's measured vectors.
 */
export function measureRunTrace(
  trace: SealedRun,
  vectors: (e: number) => readonly Float32Array[],
  run: { runId: string; configId: string; n: number },
  encoders: readonly EncoderColumn[],
  whitenings: readonly Whitening[],
  byId: Measured[][],
): OrderParamRow[] {
  const measurer = new RunMeasurer(run, encoders);
  const measured = new Array<Measured>(encoders.length);
  const ids = encoders.map((_, e) => trace.vectorIds(e));
  const stores = encoders.map((_, e) => vectors(e));
  for (let i = 0; i < trace.length; i++) {
    for (let e = 0; e < encoders.length; e++) {
      const id = ids[e][i];
      measured[e] = byId[e][id] ??= measure(whitenings[e], stores[e][id]);
    }
    measurer.add(i, trace.sweeps[i], trace.agents[i], TAGS[trace.tags[i]], measured);
  }
  return measurer.rows;
}

function measure(whitening: Whitening, raw: Float32Array): Measured {
  return { spin: toSpin(whitening, raw), unit: unitVector(raw, raw.length) };
}
