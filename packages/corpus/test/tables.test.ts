import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addedTables,
  CORPUS_TABLES,
  declaredMeaning,
  ORDER_PARAMS_TABLE,
  omitColumns,
  registerTable,
  queryRows,
  readRow,
  RUNS_TABLE,
  PHASE_TABLE,
  STATS_TABLE,
  sqlString,
  TEAMS_TABLE,
  whiteningTable,
  writeParquetTable,
  type ColumnDecl,
  type TableDecl,
} from '@panta/corpus';
// The travel study's table: the corpus format of the files already written includes it.
import { TRAVEL_JUDGE_TABLE } from '../../studies/src/travel/judge-consistency.js';
import { TRAVEL_TABLE } from '../../studies/src/travel/table-schema.js';
import { TEAM_BERTSCORE_TABLE } from '../../studies/src/teams/bertscore-table.js';
import { tempDirPerTest } from './helpers.js';

let dir: string;
tempDirPerTest((d) => {
  dir = d;
});

/**
 * The corpus format of each table: names, order and types as corpora already on disk hold them. A change here
 * is a change of format (old corpora would no longer verify or report): it must be deliberate.
 */
const FORMAT: Record<string, string> = {
  runs: 'run_id VARCHAR, config_id VARCHAR, trial INTEGER, prompt_id VARCHAR, geometry VARCHAR, n INTEGER, k INTEGER, temperature DOUBLE, protocol VARCHAR, dynamics VARCHAR, template_arm VARCHAR, population_arm VARCHAR, seed BIGINT, status VARCHAR, events BIGINT, calls BIGINT, retries BIGINT, prompt_tokens BIGINT, completion_tokens BIGINT, cost DOUBLE, extra_calls BIGINT, stopped_early BOOLEAN, sweeps_run INTEGER, calls_saved BIGINT, focus DOUBLE[], focus_total DOUBLE, drift_tolerance DOUBLE, drift_onset INTEGER, recovered BOOLEAN, wall_ms DOUBLE',
  order_params:
    'run_id VARCHAR, config_id VARCHAR, sweep INTEGER, encoder VARCHAR, magnetisation DOUBLE, cohesion DOUBLE, rho DOUBLE, delta_rho DOUBLE, n_correct INTEGER, n_hallucinated INTEGER, n_not_known INTEGER, n_judge_failure INTEGER, cds_sys DOUBLE',
  stats:
    'metric VARCHAR, cell VARCHAR, arm_a VARCHAR, arm_b VARCHAR, n_a INTEGER, mean_a DOUBLE, ci_lo_a DOUBLE, ci_hi_a DOUBLE, n_b INTEGER, mean_b DOUBLE, ci_lo_b DOUBLE, ci_hi_b DOUBLE, welch_t DOUBLE, welch_df DOUBLE, p_two_tailed DOUBLE, cohen_d DOUBLE, note VARCHAR',
  phase:
    'config_id VARCHAR, encoder VARCHAR, prompt_id VARCHAR, geometry VARCHAR, n INTEGER, temperature DOUBLE, protocol VARCHAR, dynamics VARCHAR, template_arm VARCHAR, population_arm VARCHAR, trials INTEGER, plateau_from INTEGER, spin_dim INTEGER, m DOUBLE, m_se DOUBLE, m_lo DOUBLE, m_hi DOUBLE, chi_m DOUBLE, chi_m_se DOUBLE, chi_m_lo DOUBLE, chi_m_hi DOUBLE, binder_m DOUBLE, binder_m_se DOUBLE, binder_m_lo DOUBLE, binder_m_hi DOUBLE, rho DOUBLE, rho_se DOUBLE, rho_lo DOUBLE, rho_hi DOUBLE, chi_rho DOUBLE, chi_rho_se DOUBLE, chi_rho_lo DOUBLE, chi_rho_hi DOUBLE, binder_rho DOUBLE, binder_rho_se DOUBLE, binder_rho_lo DOUBLE, binder_rho_hi DOUBLE, tau_m DOUBLE, tau_m_se DOUBLE, tau_rho DOUBLE, tau_rho_se DOUBLE, drift_m DOUBLE, drift_m_se DOUBLE, drift_rho DOUBLE, drift_rho_se DOUBLE, spread_m DOUBLE, equilibrated BOOLEAN, corr DOUBLE[], xi DOUBLE',
  teams:
    'run_id VARCHAR, config_id VARCHAR, trial INTEGER, prompt_id VARCHAR, geometry VARCHAR, n INTEGER, k INTEGER, temperature DOUBLE, protocol VARCHAR, dynamics VARCHAR, arm VARCHAR, population_arm VARCHAR, turn INTEGER, answer_event BIGINT, answer VARCHAR, tag VARCHAR, exact_match DOUBLE, fact_recall DOUBLE, focus DOUBLE, drifting BOOLEAN, drift_onset INTEGER, recovered BOOLEAN, judge_verdict VARCHAR, regenerated BOOLEAN, feedback BOOLEAN, calls BIGINT, prompt_tokens BIGINT, completion_tokens BIGINT',
  team_bertscore:
    'run_id VARCHAR, config_id VARCHAR, trial INTEGER, prompt_id VARCHAR, geometry VARCHAR, n INTEGER, k INTEGER, temperature DOUBLE, protocol VARCHAR, arm VARCHAR, turn INTEGER, bertscore_precision DOUBLE, bertscore_recall DOUBLE, bertscore_f1 DOUBLE, model VARCHAR',
  travel:
    'run_id VARCHAR, config_id VARCHAR, trial INTEGER, prompt_id VARCHAR, protocol VARCHAR, assertions_made INTEGER, assertions_wrong INTEGER, hr DOUBLE, hr_note VARCHAR, tcs DOUBLE, tcs_note VARCHAR, detection_step INTEGER, detection_note VARCHAR, recovery_steps INTEGER, recovery_note VARCHAR, calls INTEGER, cds_sys DOUBLE[], tcs_dims DOUBLE[], judge VARCHAR, judge_failures INTEGER, task_calls INTEGER, sync_calls INTEGER',
  travel_judge:
    'judge VARCHAR, outputs INTEGER, outputs_scored INTEGER, labels INTEGER, agreement DOUBLE, kappa DOUBLE, kappa_note VARCHAR',
  whitening:
    'prompt_id VARCHAR, encoder VARCHAR, mode VARCHAR, fallback VARCHAR, samples BIGINT, lambda DOUBLE, i INTEGER, mean DOUBLE, w DOUBLE[3]',
};

/** Every table Panta writes with writeParquetTable (the event shards have their own tests). */
const TABLES: TableDecl[] = [
  RUNS_TABLE,
  ORDER_PARAMS_TABLE,
  STATS_TABLE,
  PHASE_TABLE,
  TEAMS_TABLE,
  TEAM_BERTSCORE_TABLE,
  TRAVEL_TABLE,
  TRAVEL_JUDGE_TABLE,
  whiteningTable(3),
];

/** A value of a column's declared type; `variant` 1 is NULL wherever the column allows it. */
function sample(c: ColumnDecl, variant: number): unknown {
  if (variant === 1 && c.nullable) return null;
  if (c.values) return c.values[variant % c.values.length];
  const list = /^(.*)\[(\d*)\]$/.exec(c.type);
  if (list) {
    const element = { name: c.name, type: list[1] } as ColumnDecl;
    const size = list[2] === '' ? 2 + variant : Number(list[2]);
    return Array.from({ length: size }, (_, i) => (i === 1 ? null : sample(element, variant + i)));
  }
  switch (c.type) {
    case 'VARCHAR':
      return `${c.name} ${variant}`;
    case 'BOOLEAN':
      return variant % 2 === 0;
    case 'TIMESTAMP':
      return new Date(1_700_000_000_000 + variant);
    case 'BIGINT':
      return 2 ** 40 + variant;
    case 'INTEGER':
      return 7 + variant;
    default:
      return 0.5 + variant;
  }
}

const sampleRow = (t: TableDecl, variant: number) => Object.fromEntries(t.columns.map((c) => [c.name, sample(c, variant)]));

describe('each table is declared once, and the declaration, the written file and the reader agree', () => {
  it('the declarations keep the corpus format (names, order, types) of the files already written', () => {
    expect(Object.fromEntries(TABLES.map((t) => [t.name, t.columns.map((c) => `${c.name} ${c.type}`).join(', ')]))).toEqual(FORMAT);
  });

  it('every table written from the declaration reads back through DuckDB with the declared columns and values', async () => {
    for (const table of TABLES) {
      const path = join(dir, `${table.name}.parquet`);
      const rows = [sampleRow(table, 0), sampleRow(table, 1)];
      await writeParquetTable(path, table, rows as never);
      const described = await queryRows(`DESCRIBE SELECT * FROM read_parquet(${sqlString(path)})`);
      // Parquet has no fixed-size list: a DOUBLE[d] column reads back as DOUBLE[] holding d values.
      expect(
        described.map((r) => `${r.column_name} ${r.column_type}`),
        table.name,
      ).toEqual(table.columns.map((c) => `${c.name} ${c.type.replace(/\[\d+\]$/, '[]')}`));
      const back = await queryRows(`SELECT * FROM read_parquet(${sqlString(path)})`);
      expect(
        back.map((r) => readRow(table, r)),
        table.name,
      ).toEqual(rows);
    }
  });

  it('every column of every corpus table says what it means (the dataset card prints it)', () => {
    // A study's tables (the travel experiment's, registered by the test setup) are added beside the built-in ones.
    const all = { ...CORPUS_TABLES, ...Object.fromEntries(addedTables().map((t) => [t.name, t.decl.columns])) };
    expect(Object.keys(all).sort()).toEqual(['events', ...TABLES.map((t) => t.name)].sort());
    const bare = Object.entries(all).flatMap(([t, columns]) => columns.filter((c) => !c.meaning).map((c) => `${t}.${c.name}`));
    expect(bare).toEqual([]);
    expect(declaredMeaning('travel', 'hr')).toBe(TRAVEL_TABLE.columns.find((c) => c.name === 'hr')!.meaning);
    const travel = addedTables().find((t) => t.name === 'travel')!;
    expect(() => registerTable({ ...travel })).toThrow('corpus table "travel" is already registered');
    expect(() => registerTable({ ...travel, name: 'runs' })).toThrow('corpus table "runs" is already registered');
    expect(declaredMeaning('judges_gpt_4o_runs', 'focus')).toBe(declaredMeaning('runs', 'focus'));
    expect(declaredMeaning('teams', 'focus')).not.toBe(declaredMeaning('runs', 'focus'));
  });

  it('every writeParquetTable call in the sources writes a declared table', () => {
    const declared = new Set([
      'RUNS_TABLE',
      'ORDER_PARAMS_TABLE',
      'STATS_TABLE',
      'PHASE_TABLE',
      'TEAMS_TABLE',
      'TEAM_BERTSCORE_TABLE',
      'TRAVEL_TABLE',
      'TRAVEL_JUDGE_TABLE',
      'whiteningTable',
    ]);
    const root = join(import.meta.dirname, '../..');
    const written: string[] = [];
    for (const pkg of readdirSync(root)) {
      for (const file of readdirSync(join(root, pkg, 'src'), { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.ts')) continue;
        const text = readFileSync(join(root, pkg, 'src', file), 'utf8');
        for (const m of text.matchAll(/writeParquetTable\(\s*(?:[^,()]|\([^()]*\))+,\s*([A-Za-z_]+)/g)) written.push(m[1]);
      }
    }
    expect(written.length).toBeGreaterThanOrEqual(7);
    expect(written.filter((name) => !declared.has(name))).toEqual([]);
  });

  it('the reader refuses NULL where the declaration allows none and a string outside its values; a column an older file lacks reads as null or its declared value', () => {
    const row = sampleRow(RUNS_TABLE, 0);
    expect(() => readRow(RUNS_TABLE, { ...row, seed: null })).toThrow('runs.parquet: column seed is NULL');
    expect(() => readRow(RUNS_TABLE, { ...row, status: 'done' })).toThrow(
      'runs.parquet: column status holds "done", not one of complete, failed, pending',
    );
    const { template_arm: _, ...older } = row;
    expect(readRow(RUNS_TABLE, older).template_arm).toBeNull();
    // travel.parquet from before the LLM judge: its later columns read as what those files meant.
    const { judge: _j, judge_failures: _f, tcs_dims: _d, ...travel } = sampleRow(TRAVEL_TABLE, 0);
    expect(readRow(TRAVEL_TABLE, travel)).toMatchObject({ judge: 'reference', judge_failures: 0, tcs_dims: [] });
    const narrow = omitColumns(RUNS_TABLE, ['seed', 'focus']);
    expect(narrow.columns.map((c) => c.name)).not.toContain('seed');
    expect(Object.keys(readRow(narrow, { ...row, seed: undefined }))).toEqual(narrow.columns.map((c) => c.name));
  });
});
