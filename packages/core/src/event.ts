/** The four factual spins (docs/DESIGN.md#judges-and-tags). */
export const TAGS = ['correct', 'hallucinated', 'not_known', 'judge_failure'] as const;
export type Tag = (typeof TAGS)[number];

/**
 * Who made an LLM call (docs/DESIGN.md#coordination-protocols): the agent answering (the only role that sets an answer), the ssvp merge
 * that reads a divergent neighbourhood for it, and drift-policy's judge and moderator between sweeps.
 */
export const POPULATION_ROLES = ['agent', 'summary', 'merge', 'judge', 'moderator'] as const;

/**
 * The calls of team schedules (docs/teams.md). In a team run every call is an event of its own: its row is
 * the event's one row, as an `agent` row is a population event's (it carries a tag and embeddings).
 */
export const TEAM_ROLES = [
  'relay',
  'orchestrator',
  'worker',
  'aggregator',
  'persona-gen',
  'persona',
  'vote',
  'solution',
  'drift-judge',
  'feedback',
  'observer',
  'extractor',
  'debater',
] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

export const ROLES = [...POPULATION_ROLES, ...TEAM_ROLES] as const;
export type Role = (typeof ROLES)[number];

const EVENT_ROLES: ReadonlySet<string> = new Set(['agent', ...TEAM_ROLES]);

/** SQL: the rows that are their event's own row (one per event), population or team. */
export const EVENT_ROWS_SQL = `role IN (${['agent', ...TEAM_ROLES].map((r) => `'${r}'`).join(', ')})`;

/** Whether a row with this role is its event's own row (an answer or a team call), not an extra call. */
export function isEventRole(role: string): boolean {
  return EVENT_ROLES.has(role);
}

/**
 * Why a row's response is what it is: `ok`, a reply with text; `empty`, the server's reply held nothing
 * but whitespace; `unparsable`, a 2xx reply that held no readable text. Both are recorded as "" after the
 * call's retries (a server answers the same to the same seed) instead of failing the run. `skipped`: a team
 * call planned in the DAG that its run's DRIFTJudge verdict made unnecessary (no call, response "").
 */
export const REPLY_STATUSES = ['ok', 'empty', 'unparsable', 'skipped'] as const;
export type ReplyStatus = (typeof REPLY_STATUSES)[number];

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
 * One row of `events/<run_id>.parquet` (docs/DESIGN.md#event-rows). Field names are the column names.
 * `event` and `read_versions` are event indices within the run (< 2^53, stored as BIGINT).
 */
export interface EventRow extends RunColumns {
  /** The event's own seed, the one sent to the backend. */
  seed: number;
  event: number;
  /**
   * agent: the event's answer. Other roles are extra calls with the event's index: merge rows come just before
   * their agent row; judge and moderator rows after a sweep t come before the first event of sweep t + 1.
   */
  role: Role;
  sweep: number;
  agent: number;
  /** The agent's persona or hidden belief (id in the population file), or null. */
  persona: string | null;
  /** The temperature the call was sampled at: the run's, or the annealing schedule's for this sweep. */
  sampling_temperature: number;
  /** ssvp: cosine distance between the agent's answer and its neighbourhood mean; else null. */
  divergence: number | null;
  /** belief-board: JSON array of the board entries this call wrote; else null. */
  board: string | null;
  /** Neighbours read, in prompt order; empty at t = 0. */
  neighbours: Int32Array;
  /**
   * First the version of the agent's own previous answer, then one per neighbour; empty at t = 0. Rows the
   * engine builds hold an Int32Array (a run has at most 2^30 events): half the memory of a mean field's
   * rows waiting for their part (728 reads each at N = 729).
   */
  read_versions: Float64Array | Int32Array;
  response: string;
  finish_reason: string;
  reply_status: ReplyStatus;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
  backend: string;
  model: string;
  /** Null on rows that are not answers (role other than agent). */
  tag: Tag | null;
  judge_model: string;
  /** One unit vector per encoder, keyed by encoder name (column `emb_<name>`); null unless role is agent. */
  embeddings: Record<string, Float32Array> | null;
  /** Milliseconds since the epoch. */
  created_at: number;
}

/** Columns that depend on wall-clock time; every other column is a pure function of the spec and seeds. */
export const TIMING_COLUMNS = ['latency_ms', 'created_at'] as const;
