import { defineTable, type RowOf } from './table.js';

/**
 * The columns of stats.parquet (docs/DESIGN.md#arm-statistics, the synchronisation paper's Table 1 and 3): one row per
 * (metric, cell, pair of arms), where a cell is a configuration without its arm and each trial is one
 * observation. Written at finish with the order parameters; null where a number is undefined (`note` says why).
 */
export const STATS_TABLE = defineTable('stats', [
  { name: 'metric', type: 'VARCHAR', meaning: 'metric compared' },
  { name: 'cell', type: 'VARCHAR', meaning: 'grid cell compared' },
  { name: 'arm_a', type: 'VARCHAR', meaning: 'first arm' },
  { name: 'arm_b', type: 'VARCHAR', meaning: 'second arm' },
  { name: 'n_a', type: 'INTEGER', meaning: 'runs in arm a (count)' },
  { name: 'mean_a', type: 'DOUBLE', nullable: true, meaning: 'mean of arm a' },
  { name: 'ci_lo_a', type: 'DOUBLE', nullable: true, meaning: 'lower end of the 95% CI of arm a' },
  { name: 'ci_hi_a', type: 'DOUBLE', nullable: true, meaning: 'upper end of the 95% CI of arm a' },
  { name: 'n_b', type: 'INTEGER', meaning: 'runs in arm b (count)' },
  { name: 'mean_b', type: 'DOUBLE', nullable: true, meaning: 'mean of arm b' },
  { name: 'ci_lo_b', type: 'DOUBLE', nullable: true, meaning: 'lower end of the 95% CI of arm b' },
  { name: 'ci_hi_b', type: 'DOUBLE', nullable: true, meaning: 'upper end of the 95% CI of arm b' },
  { name: 'welch_t', type: 'DOUBLE', nullable: true, meaning: "Welch's t" },
  { name: 'welch_df', type: 'DOUBLE', nullable: true, meaning: "Welch's degrees of freedom" },
  { name: 'p_two_tailed', type: 'DOUBLE', nullable: true, meaning: 'two-tailed p value' },
  { name: 'cohen_d', type: 'DOUBLE', nullable: true, meaning: "Cohen's d" },
  { name: 'note', type: 'VARCHAR', nullable: true, meaning: 'why a number is undefined, where it is' },
]);

/** One row of stats.parquet. */
export type StatsTableRow = RowOf<typeof STATS_TABLE>;
