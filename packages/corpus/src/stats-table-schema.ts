import { defineTable, type RowOf } from './table.js';

/**
 * The columns of stats.parquet (docs/DESIGN.md#arm-statistics, the synchronisation paper's Table 1 and 3): one row per
 * (metric, cell, pair of arms), where a cell is a configuration without its arm and each trial is one
 * observation. Written at finish with the order parameters; null where a number is undefined (`note` says why).
 */
export const STATS_TABLE = defineTable('stats', [
  { name: 'metric', type: 'VARCHAR' },
  { name: 'cell', type: 'VARCHAR' },
  { name: 'arm_a', type: 'VARCHAR' },
  { name: 'arm_b', type: 'VARCHAR' },
  { name: 'n_a', type: 'INTEGER' },
  { name: 'mean_a', type: 'DOUBLE', nullable: true },
  { name: 'ci_lo_a', type: 'DOUBLE', nullable: true },
  { name: 'ci_hi_a', type: 'DOUBLE', nullable: true },
  { name: 'n_b', type: 'INTEGER' },
  { name: 'mean_b', type: 'DOUBLE', nullable: true },
  { name: 'ci_lo_b', type: 'DOUBLE', nullable: true },
  { name: 'ci_hi_b', type: 'DOUBLE', nullable: true },
  { name: 'welch_t', type: 'DOUBLE', nullable: true },
  { name: 'welch_df', type: 'DOUBLE', nullable: true },
  { name: 'p_two_tailed', type: 'DOUBLE', nullable: true },
  { name: 'cohen_d', type: 'DOUBLE', nullable: true },
  { name: 'note', type: 'VARCHAR', nullable: true },
]);

/** The columns of stats.parquet, in file order. */
export const STATS_COLUMNS = STATS_TABLE.columns;

/** One row of stats.parquet. */
export type StatsTableRow = RowOf<typeof STATS_TABLE>;
