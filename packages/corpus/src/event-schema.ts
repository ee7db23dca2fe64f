import { TAGS, type EncoderColumn, type EventRow, type RunColumns } from '@panta/core';
import { defineColumns, type ColumnDecl, type ColumnsRow, type Extends, type Same } from './table.js';

/** A column of a Parquet table: its name and DuckDB type text (`INTEGER`, `BIGINT[]`, `FLOAT[384]`...). */
export interface ColumnDef {
  name: string;
  type: string;
}

/**
 * The columns that say which run a row belongs to (core's RunColumns), first in the event shards and in
 * runs.parquet alike.
 */
export const RUN_ID_COLUMNS = defineColumns([
  { name: 'run_id', type: 'VARCHAR', meaning: 'identifier of the run (prompt, geometry, N, temperature, protocol, trial)' },
  { name: 'config_id', type: 'VARCHAR', meaning: 'identifier of the run configuration, shared by its trials' },
  { name: 'trial', type: 'INTEGER', meaning: 'trial index of the configuration (0-based)' },
  { name: 'prompt_id', type: 'VARCHAR', meaning: 'identifier of the prompt in the dataset' },
  { name: 'geometry', type: 'VARCHAR', meaning: 'interaction graph (ring, torus2d, complete, ...)' },
  { name: 'n', type: 'INTEGER', meaning: 'number of agents N' },
  { name: 'k', type: 'INTEGER', meaning: 'neighbours each agent reads (graph degree)' },
  { name: 'temperature', type: 'DOUBLE', meaning: 'sampling temperature T of the run' },
  { name: 'protocol', type: 'VARCHAR', meaning: 'coordination protocol of the run' },
]);

/** Core's RunColumns (the engine's rows) and these columns are the same fields: checked here at compile time. */
true satisfies Same<ColumnsRow<typeof RUN_ID_COLUMNS>, RunColumns>;

/**
 * The event columns before the embeddings, in file order (docs/DESIGN.md#event-rows). The order is part of the
 * corpus format: readers that go by position (pandas, polars) see exactly this.
 */
export const EVENT_BASE_COLUMNS = defineColumns([
  ...RUN_ID_COLUMNS,
  { name: 'seed', type: 'BIGINT', meaning: 'seed the run (or event) was drawn from' },
  { name: 'event', type: 'BIGINT', meaning: 'event index within the run: 0..N-1 are the initial answers, then one update per event' },
  { name: 'role', type: 'VARCHAR', meaning: 'who made the call: agent (an answer) or a protocol call (summary, merge, judge, moderator)' },
  { name: 'sweep', type: 'INTEGER', meaning: 'sweep index (one sweep = N events)' },
  { name: 'agent', type: 'INTEGER', meaning: 'index of the agent that answered' },
  { name: 'persona', type: 'VARCHAR', nullable: true, meaning: "the agent's persona, where the population has personas" },
  { name: 'neighbours', type: 'INTEGER[]', meaning: 'agents whose answers this agent read' },
  { name: 'read_versions', type: 'BIGINT[]', meaning: 'events that wrote the answers this agent read' },
  { name: 'response', type: 'VARCHAR', meaning: 'the model output as received (text)' },
  { name: 'board', type: 'VARCHAR', nullable: true, meaning: 'board entries the agent read' },
  { name: 'divergence', type: 'DOUBLE', nullable: true, meaning: 'ssvp divergence (CDS) of the update, where the protocol computes it' },
  { name: 'finish_reason', type: 'VARCHAR', meaning: "the server's finish reason" },
  { name: 'reply_status', type: 'VARCHAR', meaning: 'ok, or empty / unparsable: a reply with no usable text on every attempt' },
  { name: 'prompt_tokens', type: 'INTEGER', meaning: 'prompt tokens (count)' },
  { name: 'completion_tokens', type: 'INTEGER', meaning: 'completion tokens (count)' },
  { name: 'latency_ms', type: 'DOUBLE', meaning: 'latency of the call (milliseconds)' },
  { name: 'sampling_temperature', type: 'DOUBLE', meaning: 'temperature the call was sampled at' },
  { name: 'backend', type: 'VARCHAR', meaning: 'backend kind' },
  { name: 'model', type: 'VARCHAR', meaning: 'model name' },
  {
    name: 'tag',
    type: 'VARCHAR',
    nullable: true,
    values: TAGS,
    meaning: "the sweep judge's tag: correct, hallucinated, not_known or judge_failure",
  },
  { name: 'judge_model', type: 'VARCHAR', meaning: 'model of the judge' },
]);

/**
 * Core's EventRow (the rows the engine builds) has a field for each of these columns, and each scalar field's
 * values (NULL included) are the column's: checked at compile time. The lists are typed arrays there.
 */
true satisfies Same<keyof ColumnsRow<typeof EVENT_BASE_COLUMNS>, Exclude<keyof EventRow, 'embeddings' | 'created_at'>>;
true satisfies Extends<
  Omit<EventRow, 'embeddings' | 'created_at' | 'neighbours' | 'read_versions'>,
  Omit<ColumnsRow<typeof EVENT_BASE_COLUMNS>, 'neighbours' | 'read_versions'>
>;

/** The last column, after the embeddings; filled from EventRow.created_at (epoch milliseconds). */
export const CREATED_AT_COLUMN: ColumnDecl = { name: 'created_at', type: 'TIMESTAMP', meaning: 'time the row was written (UTC timestamp)' };

const ENCODER_NAME = /^[a-z][a-z0-9_]*$/;

/** The column holding an encoder's embeddings. */
export function embColumnName(encoder: string): string {
  return `emb_${encoder}`;
}

/**
 * The column of an encoder's embeddings (after the base columns, in the encoders' order). Staged as FLOAT[]
 * lists: see eventColumns.
 */
export function embColumn(encoder: string): ColumnDecl {
  return {
    name: embColumnName(encoder),
    type: 'FLOAT[]',
    nullable: true,
    meaning: `embedding of the answer by encoder ${encoder} (FLOAT list of dim values; unit vector)`,
  };
}

/** The column of a post-hoc judge's tags (tagColumnName), after the embeddings. */
export function tagColumn(judge: string): ColumnDecl {
  return {
    name: tagColumnName(judge),
    type: 'VARCHAR',
    nullable: true,
    values: TAGS,
    meaning: `tag of the post-hoc judge ${judge}: correct, hallucinated, not_known or judge_failure`,
  };
}

/**
 * The column holding a post-hoc judge's tags (`panta judge`), after the embeddings: the sweep's own judge
 * fills `tag`, which the dynamics saw (early stopping, drift policy) and which stays as it was.
 */
export function tagColumnName(judge: string): string {
  return `tag_${judge}`;
}

/** Throws unless every encoder has a valid, unique name and a positive integer dimension. */
export function validateEncoders(encoders: readonly EncoderColumn[]): void {
  const seen = new Set<string>();
  for (const e of encoders) {
    if (!ENCODER_NAME.test(e.name)) {
      throw new Error(
        `encoder name ${JSON.stringify(e.name)} is not a valid column suffix: use lower-case letters, digits and _ starting with a letter`,
      );
    }
    if (seen.has(e.name)) throw new Error(`encoder ${e.name} is listed twice`);
    seen.add(e.name);
    if (!Number.isSafeInteger(e.dim) || e.dim <= 0)
      throw new Error(`encoder ${e.name}: dimension must be a positive integer, got ${e.dim}`);
  }
}

/**
 * All event columns, in file order, for these encoders (in the order given). Embeddings are staged as
 * FLOAT[] lists: Parquet has no fixed-size list, so a FLOAT[d] column is written as a list anyway, and
 * DuckDB takes a list faster than an ARRAY (bench/NOTES.md: FLOAT[] lists). The writer checks every
 * embedding's length, so each row holds exactly d values (read back as FLOAT[], castable to FLOAT[d]).
 */
export function eventColumns(encoders: readonly EncoderColumn[]): ColumnDecl[] {
  validateEncoders(encoders);
  return [...EVENT_BASE_COLUMNS, ...encoders.map((e) => embColumn(e.name)), CREATED_AT_COLUMN];
}

/** `CREATE TABLE`-style column list: `"run_id" VARCHAR, ...`. */
export function columnListSql(columns: readonly ColumnDef[]): string {
  return columns.map((c) => `"${c.name.replaceAll('"', '""')}" ${c.type}`).join(', ');
}
