/** The four factual spins of DESIGN.md section 4. */
export const TAGS = ['correct', 'hallucinated', 'not_known', 'judge_failure'] as const;
export type Tag = (typeof TAGS)[number];

/** An encoder's identity as the corpus sees it: the `emb_<name>` column and its fixed dimension. */
export interface EncoderColumn {
  name: string;
  dim: number;
}

/** The columns that say which run a row belongs to, in the event shards and in runs.parquet alike. */
export interface RunColumns {
  run_id: string;
  config_id: string;
  trial: number;
  prompt_id: string;
  geometry: string;
  n: number;
  /** Nominal degree of the configuration's geometry (ring 2, torus2d 4, meanfield N-1 or the sample size). */
  k: number;
  temperature: number;
  protocol: string;
}

/**
 * One row of `events/<run_id>.parquet` (DESIGN.md section 5). Field names are the column names.
 * `event` and `read_versions` are event indices within the run (< 2^53, stored as BIGINT).
 */
export interface EventRow extends RunColumns {
  /** The event's own seed, the one sent to the backend. */
  seed: number;
  event: number;
  sweep: number;
  agent: number;
  /** Neighbours read, in prompt order; empty at t = 0. */
  neighbours: Int32Array;
  /** First the version of the agent's own previous answer, then one per neighbour; empty at t = 0. */
  read_versions: Float64Array;
  response: string;
  finish_reason: string;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
  backend: string;
  model: string;
  tag: Tag;
  judge_model: string;
  /** One unit vector per encoder, keyed by encoder name (column `emb_<name>`). */
  embeddings: Record<string, Float32Array>;
  /** Milliseconds since the epoch. */
  created_at: number;
}

/** Columns that depend on wall-clock time; every other column is a pure function of the spec and seeds. */
export const TIMING_COLUMNS = ['latency_ms', 'created_at'] as const;
