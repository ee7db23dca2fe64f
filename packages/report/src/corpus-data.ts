import { omitColumns, RUNS_TABLE, type Manifest, type OrderParamRow, type RowOf } from '@panta/corpus';

/*
 * What the figures and tables are made from (the runs.parquet columns it reads, and types): a leaf every file of
 * the report may import (it imports nothing of the report). load-corpus.ts reads it.
 */

/**
 * runs.parquet as the report reads it: every column but the run's seed and its per-sweep FOCUS and drift
 * tolerance, which no figure uses (and which a corpus without runs.parquet cannot give).
 */
export const RUN_INFO_TABLE = omitColumns(RUNS_TABLE, ['seed', 'focus', 'drift_tolerance']);

/** One run as the report sees it: the columns of runs.parquet (docs/DESIGN.md#tables); null where unknown. */
export type RunInfo = RowOf<typeof RUN_INFO_TABLE>;

/** Everything the figures and tables are made from. */
export interface CorpusData {
  /** The corpus folder, resolved. */
  dir: string;
  manifest: Manifest;
  /** Every run known (planned runs from runs.parquet, or the complete runs when it is missing), in plan order. */
  runs: RunInfo[];
  /** One row per (run, sweep, encoder), complete runs only. */
  orderParams: OrderParamRow[];
  /** Encoder names, in manifest order. */
  encoders: string[];
  /** True when order parameters were recomputed here from the complete runs (no order_params.parquet yet). */
  provisional: boolean;
  /** Things a reader must know (incomplete corpus, missing files), shown at the top of the report. */
  notes: string[];
  /** What only the event rows tell (calls per role, the relay budget); null unless loaded with `events: true`. */
  events: EventStats | null;
  /** Prompts left out of the main text's pooled analyses (the report's --exclude-prompts, else the spec's exclude_prompts); per-prompt rows keep them. */
  excludePrompts?: string[];
  /** Where excludePrompts came from, as captions name it: `--exclude-prompts` or `exclude_prompts in the spec`. */
  excludeSource?: string;
  /**
   * The spread over trials of Figure 6's band and the truncation table's yardstick: one standard deviation (the
   * paper's, the default) or one standard error (the report's --spread se).
   */
  spread?: 'sd' | 'se';
}

export interface LoadOptions {
  /** Also query the event shards (writeReport does; the dashboard's live curves do not need it). */
  events?: boolean;
  /**
   * A post-hoc judge (`panta judge --name`): every tag-derived number (rho, delta rho, tag counts, FOCUS,
   * drift) comes from its tables under judges/<name>/ instead of the sweep judge's.
   */
  judge?: string;
}

/** LLM calls and tokens of one role in one run, counted from the event rows. */
export interface RoleUsage {
  run_id: string;
  /** agent, merge, judge or moderator. */
  role: string;
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
}

/** What the report needs from the event rows themselves, queried in DuckDB: only aggregates come back to JS. */
export interface EventStats {
  /** Calls and tokens per run and role; null unless the sweep grids the protocol (the protocols table is their reader). */
  roles: RoleUsage[] | null;
  /** Accuracy of each chain run at the sweep's token budget; null unless chain runs have two sizes or more. */
  relay: RelayRun[] | null;
}

/** One chain run at the budget: the snapshot at the last event whose cumulative tokens are <= B. */
export interface RelayRun {
  run_id: string;
  /** B: the smallest total token count (prompt + completion, every role) of any chain run of the same prompt. */
  budget: number;
  /** The last event within the budget, and the tokens spent up to it (null: not even the first event fits). */
  cut_event: number | null;
  tokens_used: number | null;
  /** Sweep of the snapshot's latest answer. */
  sweep: number | null;
  /** Agents that have answered by the cut, and how their latest answers are judged. */
  agents: number;
  correct: number;
  hallucinated: number;
  /** correct / (correct + hallucinated); null when the snapshot has neither. */
  accuracy: number | null;
}

/** Sweeps per run as the spec planned them (each run has sweeps + 1 snapshots, t = 0 included). */
export function specSweeps(manifest: Manifest): number {
  return (manifest.spec as { sweeps?: number }).sweeps ?? 10;
}
