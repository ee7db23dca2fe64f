import type { ChatMessages, RunPlan } from '@panta/core';
import { CREATED_AT_COLUMN, EVENT_BASE_COLUMNS, embColumn, tagColumn } from './event-schema.js';
import { ORDER_PARAMS_TABLE } from './measure/order-params-io.js';
import { PHASE_TABLE } from './measure/phase-table.js';
import { whiteningTable } from './measure/whitening-io.js';
import { RUNS_TABLE } from './run-table-schema.js';
import { STATS_TABLE } from './stats-table-schema.js';
import type { ColumnDecl, TableDecl } from './table.js';
import { TEAMS_TABLE } from './team-table-schema.js';

/**
 * Every table of a corpus with its declared columns, by the name `panta publish` gives it: the one place the
 * dataset card learns what a column means. Embedding and post-hoc tag columns (emb_<encoder>, tag_<judge>)
 * are named by their prefix; a post-hoc judge's runs and order parameters (judges_<name>_runs, ...) are
 * the corpus's tables. A study's tables are added with registerTable.
 */
export const CORPUS_TABLES: Readonly<Record<string, readonly ColumnDecl[]>> = {
  events: [...EVENT_BASE_COLUMNS, CREATED_AT_COLUMN],
  runs: RUNS_TABLE.columns,
  order_params: ORDER_PARAMS_TABLE.columns,
  stats: STATS_TABLE.columns,
  phase: PHASE_TABLE.columns,
  teams: TEAMS_TABLE.columns,
  whitening: whiteningTable(1).columns,
};

/** What a table's rows may ask the sweep's LLM judge: a rubric's reply through its verdict store (LlmJudge). */
export interface RubricJudge {
  readonly model: string;
  rubricReply(key: string, messages: ChatMessages, maxTokens: number, accept: (text: string) => boolean): Promise<string | null>;
}

/**
 * A table a study adds to a corpus beside the built-in ones: `<out>/<file>`, written whole at finish when
 * the sweep has runs it is about and every run is complete, checked by `panta verify`, its columns' meanings
 * in the dataset card.
 */
export interface AddedTable {
  /** Its name in `panta publish` and the dataset card. */
  readonly name: string;
  /** Its file in the corpus folder. */
  readonly file: string;
  readonly decl: TableDecl;
  /** Whether the sweep has runs the table is about: without any it is neither written nor expected. */
  applies(runs: readonly RunPlan[]): boolean;
  /** Writes the file for the complete runs; with `judge`, the sweep's LLM judge scores what it scores. */
  write(out: string, complete: readonly RunPlan[], judge?: RubricJudge): Promise<void>;
  /** What `panta verify` finds wrong in the written file, recomputed from the runs (every one complete). */
  check(out: string, runs: readonly RunPlan[]): Promise<string[]>;
  /** Added after corpora it applies to were written: verify checks it where present and does not ask for it. */
  readonly optional?: boolean;
}

const ADDED = new Map<string, AddedTable>();

/** Adds a study's table to every corpus whose runs it applies to; a name already taken is refused. */
export function registerTable(table: AddedTable): void {
  if (Object.hasOwn(CORPUS_TABLES, table.name) || ADDED.has(table.name))
    throw new Error(`corpus table "${table.name}" is already registered`);
  ADDED.set(table.name, table);
}

/** The tables studies added, in the order they were registered. */
export function addedTables(): readonly AddedTable[] {
  return [...ADDED.values()];
}

/** Every table's declared columns, the built-in ones and those studies added. */
function allTables(): Readonly<Record<string, readonly ColumnDecl[]>> {
  return { ...CORPUS_TABLES, ...Object.fromEntries([...ADDED.values()].map((t) => [t.name, t.decl.columns])) };
}

/** What a column of a corpus table means, from its declaration; undefined for a column no table declares. */
export function declaredMeaning(table: string, column: string): string | undefined {
  if (table === 'events' && column.startsWith('emb_')) return embColumn(column.slice('emb_'.length)).meaning;
  if (table === 'events' && column.startsWith('tag_')) return tagColumn(column.slice('tag_'.length)).meaning;
  const tables = allTables();
  const own = tables[table.replace(/^judges_.+_(runs|order_params)$/, '$1')];
  const declared =
    own?.find((c) => c.name === column) ??
    Object.values(tables)
      .flat()
      .find((c) => c.name === column);
  return declared?.meaning;
}
