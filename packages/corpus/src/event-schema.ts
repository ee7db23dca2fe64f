import type { EncoderColumn, RunColumns } from '@panta/core';
import { defineColumns, type ColumnsRow, type Same } from './table.js';

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
  { name: 'run_id', type: 'VARCHAR' },
  { name: 'config_id', type: 'VARCHAR' },
  { name: 'trial', type: 'INTEGER' },
  { name: 'prompt_id', type: 'VARCHAR' },
  { name: 'geometry', type: 'VARCHAR' },
  { name: 'n', type: 'INTEGER' },
  { name: 'k', type: 'INTEGER' },
  { name: 'temperature', type: 'DOUBLE' },
  { name: 'protocol', type: 'VARCHAR' },
]);

/** Core's RunColumns (the engine's rows) and these columns are the same fields: checked here at compile time. */
true satisfies Same<ColumnsRow<typeof RUN_ID_COLUMNS>, RunColumns>;

/**
 * The event columns before the embeddings, in file order (docs/DESIGN.md#event-rows). The order is part of the
 * corpus format: readers that go by position (pandas, polars) see exactly this.
 */
export const EVENT_BASE_COLUMNS: readonly ColumnDef[] = [
  ...RUN_ID_COLUMNS,
  { name: 'seed', type: 'BIGINT' },
  { name: 'event', type: 'BIGINT' },
  { name: 'role', type: 'VARCHAR' },
  { name: 'sweep', type: 'INTEGER' },
  { name: 'agent', type: 'INTEGER' },
  { name: 'persona', type: 'VARCHAR' },
  { name: 'neighbours', type: 'INTEGER[]' },
  { name: 'read_versions', type: 'BIGINT[]' },
  { name: 'response', type: 'VARCHAR' },
  { name: 'board', type: 'VARCHAR' },
  { name: 'divergence', type: 'DOUBLE' },
  { name: 'finish_reason', type: 'VARCHAR' },
  { name: 'reply_status', type: 'VARCHAR' },
  { name: 'prompt_tokens', type: 'INTEGER' },
  { name: 'completion_tokens', type: 'INTEGER' },
  { name: 'latency_ms', type: 'DOUBLE' },
  { name: 'sampling_temperature', type: 'DOUBLE' },
  { name: 'backend', type: 'VARCHAR' },
  { name: 'model', type: 'VARCHAR' },
  { name: 'tag', type: 'VARCHAR' },
  { name: 'judge_model', type: 'VARCHAR' },
];

/** The last column, after the embeddings; filled from EventRow.created_at (epoch milliseconds). */
export const CREATED_AT_COLUMN: ColumnDef = { name: 'created_at', type: 'TIMESTAMP' };

const ENCODER_NAME = /^[a-z][a-z0-9_]*$/;

/** The column holding an encoder's embeddings. */
export function embColumnName(encoder: string): string {
  return `emb_${encoder}`;
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
export function eventColumns(encoders: readonly EncoderColumn[]): ColumnDef[] {
  validateEncoders(encoders);
  return [...EVENT_BASE_COLUMNS, ...encoders.map((e) => ({ name: embColumnName(e.name), type: 'FLOAT[]' })), CREATED_AT_COLUMN];
}

/** `CREATE TABLE`-style column list: `"run_id" VARCHAR, ...`. */
export function columnListSql(columns: readonly ColumnDef[]): string {
  return columns.map((c) => `"${c.name.replaceAll('"', '""')}" ${c.type}`).join(', ');
}
