import { measureSnapshot, toSpin, unitVector, type EncoderColumn, type Tag, type Whitening } from '@panta/core';
import { readEvents } from '../event-reader.js';
import { VectorCache } from './keyed.js';

/** One row of order_params.parquet (DESIGN.md 5). */
export interface OrderParamRow {
  run_id: string;
  config_id: string;
  sweep: number;
  encoder: string;
  magnetisation: number;
  cohesion: number;
  rho: number | null;
  delta_rho: number | null;
  n_correct: number;
  n_hallucinated: number;
  n_not_known: number;
  n_judge_failure: number;
  cds_sys: number;
}

export const ORDER_PARAM_COLUMNS = [
  { name: 'run_id', type: 'VARCHAR' },
  { name: 'config_id', type: 'VARCHAR' },
  { name: 'sweep', type: 'INTEGER' },
  { name: 'encoder', type: 'VARCHAR' },
  { name: 'magnetisation', type: 'DOUBLE' },
  { name: 'cohesion', type: 'DOUBLE' },
  { name: 'rho', type: 'DOUBLE' },
  { name: 'delta_rho', type: 'DOUBLE' },
  { name: 'n_correct', type: 'INTEGER' },
  { name: 'n_hallucinated', type: 'INTEGER' },
  { name: 'n_not_known', type: 'INTEGER' },
  { name: 'n_judge_failure', type: 'INTEGER' },
  { name: 'cds_sys', type: 'DOUBLE' },
] as const;

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
 * after sweep t (carry forward). Reads the run's events in shard order (event order, checked); spins are
 * computed once per distinct embedding, in `caches` (one per encoder, keyed by name; see measuredCache).
 */
export async function measureRunShard(
  files: string | readonly string[],
  run: { runId: string; configId: string; n: number },
  encoders: readonly EncoderColumn[],
  caches: ReadonlyMap<string, ReturnType<typeof measuredCache>>,
): Promise<OrderParamRow[]> {
  const n = run.n;
  const tags: Tag[] = new Array(n).fill('not_known');
  const state = encoders.map((e) => ({
    encoder: e,
    column: `emb_${e.name}`,
    cache: caches.get(e.name)!,
    spins: new Array<Float64Array>(n),
    units: new Array<Float64Array>(n),
  }));
  const rows: OrderParamRow[] = [];
  const rho0 = new Map<string, number | null>();
  const columns = ['event', 'sweep', 'agent', 'tag', ...state.map((s) => s.column)];
  let expected = 0;
  for await (const batch of readEvents(typeof files === 'string' ? [files] : [...files], { columns, where: "role = 'agent'" })) {
    const events = batch.columns.event as number[];
    const sweeps = batch.columns.sweep as number[];
    const agents = batch.columns.agent as number[];
    const batchTags = batch.columns.tag as Tag[];
    const vectors = state.map((s) => batch.columns[s.column] as Float32Array);
    for (let r = 0; r < batch.rows; r++) {
      if (events[r] !== expected) throw new Error(`${run.runId}: expected event ${expected}, found ${events[r]}`);
      expected++;
      const agent = agents[r]!;
      tags[agent] = batchTags[r]!;
      for (let e = 0; e < state.length; e++) {
        const s = state[e]!;
        const d = s.encoder.dim;
        const measured = s.cache.getAt(vectors[e]!, r * d, d, (raw) => ({ spin: toSpin(s.cache.whitening, raw), unit: unitVector(raw, d) }));
        s.spins[agent] = measured.spin;
        s.units[agent] = measured.unit;
      }
      if (events[r]! % n === n - 1) {
        const sweep = sweeps[r]!;
        for (const s of state) {
          const m = measureSnapshot(s.spins, s.units, tags, s.encoder.dim);
          if (sweep === 0) rho0.set(s.encoder.name, m.rho);
          const base = rho0.get(s.encoder.name) ?? null;
          rows.push({
            run_id: run.runId,
            config_id: run.configId,
            sweep,
            encoder: s.encoder.name,
            ...m,
            delta_rho: m.rho !== null && base !== null ? m.rho - base : null,
          });
        }
      }
    }
  }
  return rows;
}
