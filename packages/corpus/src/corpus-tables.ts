import { CREATED_AT_COLUMN, EVENT_BASE_COLUMNS, embColumn, tagColumn } from './event-schema.js';
import { ORDER_PARAMS_TABLE } from './measure/order-params-io.js';
import { whiteningTable } from './measure/whitening-io.js';
import { RUNS_TABLE } from './run-table-schema.js';
import { STATS_TABLE } from './stats-table-schema.js';
import type { ColumnDecl } from './table.js';
import { TEAMS_TABLE } from './team-table-schema.js';
import { TRAVEL_TABLE } from './travel-table-schema.js';

/**
 * Every table of a corpus with its declared columns, by the name `panta publish` gives it: the one place the
 * dataset card learns what a column means. Embedding and post-hoc tag columns (emb_<encoder>, tag_<judge>)
 * are named by their prefix; a post-hoc judge's runs and order parameters (judges_<name>_runs, ...) are
 * the corpus's tables.
 */
export const CORPUS_TABLES: Readonly<Record<string, readonly ColumnDecl[]>> = {
  events: [...EVENT_BASE_COLUMNS, CREATED_AT_COLUMN],
  runs: RUNS_TABLE.columns,
  order_params: ORDER_PARAMS_TABLE.columns,
  stats: STATS_TABLE.columns,
  teams: TEAMS_TABLE.columns,
  travel: TRAVEL_TABLE.columns,
  whitening: whiteningTable(1).columns,
};

/** What a column of a corpus table means, from its declaration; undefined for a column no table declares. */
export function declaredMeaning(table: string, column: string): string | undefined {
  if (table === 'events' && column.startsWith('emb_')) return embColumn(column.slice('emb_'.length)).meaning;
  if (table === 'events' && column.startsWith('tag_')) return tagColumn(column.slice('tag_'.length)).meaning;
  const own = CORPUS_TABLES[table.replace(/^judges_.+_(runs|order_params)$/, '$1')];
  const declared =
    own?.find((c) => c.name === column) ??
    Object.values(CORPUS_TABLES)
      .flat()
      .find((c) => c.name === column);
  return declared?.meaning;
}
