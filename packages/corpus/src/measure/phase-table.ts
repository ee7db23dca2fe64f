import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  binderCumulant,
  bootstrapOverTrials,
  checkPlateau,
  checkTrials,
  factualSpin,
  InputError,
  integratedAutocorrelationTime,
  plateauStart,
  pooledMoment,
  Z_EQUILIBRATION,
  susceptibility,
  type BootstrapInterval,
  type RunPlan,
} from '@panta/core';
import { CORPUS_FILES, phaseTablePath, shardPath } from '../corpus-paths.js';
import { readParquetSql } from '../duckdb.js';
import { queryRows, writeParquetTable } from '../parquet-table.js';
import { defineTable, firstDifference, readRow, type RowOf } from '../table.js';
import type { OrderParamRow } from './order-params-io.js';
import { type Correlation, correlationKey, latticeCorrelations } from './phase-correlation.js';

/** A fluctuation measure's value with its bootstrap standard error and 95% interval over trials. */
function measured<const N extends string>(name: N, meaning: string) {
  const col = <const M extends string>(n: M, m: string) => ({ name: n, type: 'DOUBLE', nullable: true, meaning: m }) as const;
  return [
    col(name, meaning),
    col(`${name}_se`, `standard error of ${name} (bootstrap over trials)`),
    col(`${name}_lo`, `lower end of the 95% bootstrap interval of ${name}`),
    col(`${name}_hi`, `upper end of the 95% bootstrap interval of ${name}`),
  ] as const;
}

/**
 * phase.parquet (docs/DESIGN.md#phase): one row per (configuration, encoder), the fluctuation measures of its
 * trials' plateaus (sweeps plateau_from..T), written at finish with the order parameters and recomputed by
 * `panta verify`. Null where a number is undefined (no judged answer for rho, fewer than two trials for an
 * interval). Corpora written before the table have no such file.
 */
export const PHASE_TABLE = defineTable('phase', [
  { name: 'config_id', type: 'VARCHAR', meaning: 'identifier of the run configuration, shared by its trials' },
  { name: 'encoder', type: 'VARCHAR', meaning: 'sentence encoder the spins come from' },
  { name: 'prompt_id', type: 'VARCHAR', meaning: 'identifier of the prompt in the dataset' },
  { name: 'geometry', type: 'VARCHAR', meaning: 'interaction graph (ring, torus2d, complete, ...)' },
  { name: 'n', type: 'INTEGER', meaning: 'number of agents N' },
  { name: 'temperature', type: 'DOUBLE', meaning: 'sampling temperature T of the configuration' },
  { name: 'protocol', type: 'VARCHAR', meaning: 'coordination protocol of the configuration' },
  { name: 'dynamics', type: 'VARCHAR', meaning: 'update rule of the configuration (glauber, ...)' },
  { name: 'template_arm', type: 'VARCHAR', nullable: true, meaning: 'template arm; NULL when the sweep does not grid templates' },
  { name: 'population_arm', type: 'VARCHAR', nullable: true, meaning: 'population arm; NULL when the sweep does not grid populations' },
  { name: 'trials', type: 'INTEGER', meaning: 'trials measured (count)' },
  { name: 'plateau_from', type: 'INTEGER', meaning: 'first sweep counted: ceil(T/2) of T sweeps (the plateau rule)' },
  {
    name: 'spin_dim',
    type: 'INTEGER',
    meaning: 'spin dimension n of the Binder cumulant: min(encoder dim, distinct t = 0 answers of the prompt - 1), at least 1',
  },
  ...measured('m', 'mean magnetisation on the plateau'),
  ...measured('chi_m', 'susceptibility N (<m^2> - <m>^2)'),
  ...measured('binder_m', 'Binder cumulant 1 - n <m^4> / ((n + 2) <m^2>^2)'),
  ...measured('rho', 'mean hallucination density on the plateau'),
  ...measured('chi_rho', 'susceptibility of the factual spin f = 1 - 2 rho: N (<f^2> - <f>^2)'),
  ...measured('binder_rho', 'Binder cumulant of the factual spin (n = 1): 1 - <f^4> / (3 <f^2>^2)'),
  {
    name: 'tau_m',
    type: 'DOUBLE',
    nullable: true,
    meaning: 'relaxation time of m(t): integrated autocorrelation time (sweeps), mean over trials',
  },
  { name: 'tau_m_se', type: 'DOUBLE', nullable: true, meaning: 'standard error of tau_m over trials' },
  { name: 'tau_rho', type: 'DOUBLE', nullable: true, meaning: 'relaxation time of rho(t) (sweeps), mean over trials' },
  { name: 'tau_rho_se', type: 'DOUBLE', nullable: true, meaning: 'standard error of tau_rho over trials' },
  { name: 'drift_m', type: 'DOUBLE', nullable: true, meaning: "m's second plateau half minus its first (mean over trials)" },
  { name: 'drift_m_se', type: 'DOUBLE', nullable: true, meaning: 'standard error of drift_m' },
  { name: 'drift_rho', type: 'DOUBLE', nullable: true, meaning: "rho's second plateau half minus its first" },
  { name: 'drift_rho_se', type: 'DOUBLE', nullable: true, meaning: 'standard error of drift_rho' },
  {
    name: 'spread_m',
    type: 'DOUBLE',
    nullable: true,
    meaning:
      "chi-square per degree of freedom of the trials' plateau means of m about their weighted mean, each with its own error (about 1 in equilibrium); NULL below two trials",
  },
  {
    name: 'equilibrated',
    type: 'BOOLEAN',
    meaning:
      'false when the plateau halves of m or rho differ by more than 3 standard errors, or spread_m is above its 3-sigma chi-square bound (trials in different states)',
  },
  {
    name: 'corr',
    type: 'DOUBLE[]',
    nullable: true,
    meaning: 'C(r) for r = 0, 1, ...: mean s_i . s_j over pairs at graph distance r, last snapshot of each trial; NULL off lattices',
  },
  { name: 'xi', type: 'DOUBLE', nullable: true, meaning: 'second-moment correlation length from C(r) (graph distance); NULL off lattices' },
]);

/** One row of phase.parquet. */
export type PhaseRow = RowOf<typeof PHASE_TABLE>;

/** A run's identity as the table needs it (a RunPlan has it). */
type PhaseRun = Pick<
  RunPlan,
  'runId' | 'configId' | 'trial' | 'n' | 'temperature' | 'protocol' | 'dynamics' | 'sweeps' | 'arms' | 'geometry' | 'seed'
> & {
  prompt: { id: string };
  geometryLabel: string;
};

/** Key of a (prompt, encoder)'s spin dimension. */
export const spinDimKey = (promptId: string, encoder: string) => `${promptId}\u0000${encoder}`;

/** What one measure's columns hold: a value and the bootstrap of it, or nulls. */
function withInterval<N extends string>(name: N, value: number | null, b: BootstrapInterval | null) {
  return {
    [name]: value,
    [`${name}_se`]: b?.se ?? null,
    [`${name}_lo`]: b?.lo ?? null,
    [`${name}_hi`]: b?.hi ?? null,
  } as Record<N | `${N}_se` | `${N}_lo` | `${N}_hi`, number | null>;
}

/** A measure over trials' plateaus and its bootstrap (seeded by the configuration, encoder and measure). */
function measure<N extends string>(
  name: N,
  trials: readonly (readonly number[])[],
  estimate: (s: readonly (readonly number[])[]) => number | null,
  seed: string,
) {
  const usable = trials.filter((t) => t.length > 0);
  const value = usable.length > 0 ? estimate(usable) : null;
  return withInterval(name, value, value === null ? null : bootstrapOverTrials(usable, estimate, `${seed}/${name}`));
}

/** Mean and standard error over trials of each trial's relaxation time (null without one; se null below two). */
function relaxation(trials: readonly (readonly number[])[]): { mean: number | null; se: number | null } {
  const taus = trials.map(integratedAutocorrelationTime).filter((t): t is number => t !== null);
  if (taus.length === 0) return { mean: null, se: null };
  const m = taus.reduce((a, b) => a + b, 0) / taus.length;
  if (taus.length < 2) return { mean: m, se: null };
  const v = taus.reduce((a, b) => a + (b - m) * (b - m), 0) / (taus.length - 1);
  return { mean: m, se: Math.sqrt(v / taus.length) };
}

/** Each trial's plateau series of m and of the factual spin, in trial order. */
function plateaus(trials: readonly PhaseRun[], bySweep: ReadonlyMap<string, OrderParamRow[]>, from: number) {
  const m: number[][] = [];
  const f: number[][] = [];
  const rho: number[][] = [];
  for (const run of trials) {
    const rows = (bySweep.get(run.runId) ?? []).filter((r) => r.sweep >= from);
    m.push(rows.map((r) => r.magnetisation));
    rho.push(rows.map((r) => r.rho).filter((x): x is number => x !== null));
    f.push(rows.map((r) => factualSpin(r.rho)).filter((x): x is number => x !== null));
  }
  return { m, f, rho };
}

/**
 * The table's rows: per configuration and encoder, in the order configurations first appear in `runs` and
 * encoders in `orderParams`. `spinDims` holds each (prompt, encoder)'s spin dimension (spinDimKey).
 */
export function phaseRows(
  runs: readonly PhaseRun[],
  orderParams: readonly OrderParamRow[],
  spinDims: ReadonlyMap<string, number>,
  correlations: ReadonlyMap<string, Correlation> = new Map(),
): PhaseRow[] {
  const byConfig = new Map<string, PhaseRun[]>();
  for (const r of runs) byConfig.set(r.configId, [...(byConfig.get(r.configId) ?? []), r]);
  const encoders = [...new Set(orderParams.map((p) => p.encoder))];
  const series = new Map<string, Map<string, OrderParamRow[]>>(encoders.map((e) => [e, new Map()]));
  for (const p of [...orderParams].sort((a, b) => a.sweep - b.sweep)) {
    const perRun = series.get(p.encoder)!;
    perRun.set(p.run_id, [...(perRun.get(p.run_id) ?? []), p]);
  }
  const rows: PhaseRow[] = [];
  for (const [configId, trialsUnsorted] of byConfig) {
    const trials = [...trialsUnsorted].sort((a, b) => a.trial - b.trial);
    const first = trials[0];
    for (const encoder of encoders) {
      const bySweep = series.get(encoder)!;
      if (!trials.some((t) => bySweep.has(t.runId))) continue;
      const row = configRow(configId, encoder, trials, bySweep, spinDims.get(spinDimKey(first.prompt.id, encoder)) ?? 1);
      const c = correlations.get(correlationKey(configId, encoder));
      rows.push({ ...row, corr: c?.corr ?? null, xi: c?.xi ?? null });
    }
  }
  return rows;
}

function configRow(
  configId: string,
  encoder: string,
  trials: readonly PhaseRun[],
  bySweep: ReadonlyMap<string, OrderParamRow[]>,
  spinDim: number,
): Omit<PhaseRow, 'corr' | 'xi'> {
  const first = trials[0];
  const from = plateauStart(first.sweeps);
  const { m, f, rho } = plateaus(trials, bySweep, from);
  const seed = `${configId}/${encoder}`;
  const n = first.n;
  const mean = (s: readonly (readonly number[])[]) => {
    const v = pooledMoment(s, 1);
    return Number.isFinite(v) ? v : null;
  };
  const tauM = relaxation(m);
  const tauRho = relaxation(rho);
  const checkM = checkPlateau(m);
  const checkRho = checkPlateau(rho);
  const trialsM = checkTrials(m);
  const drift = (c: typeof checkM) => (c.first === null || c.second === null ? null : c.second - c.first);
  return {
    config_id: configId,
    encoder,
    prompt_id: first.prompt.id,
    geometry: first.geometryLabel,
    n,
    temperature: first.temperature,
    protocol: first.protocol,
    dynamics: first.dynamics,
    template_arm: first.arms?.template ?? null,
    population_arm: first.arms?.population ?? null,
    trials: trials.length,
    plateau_from: from,
    spin_dim: spinDim,
    ...measure('m', m, mean, seed),
    ...measure('chi_m', m, (s) => susceptibility(s, n), seed),
    ...measure('binder_m', m, (s) => binderCumulant(s, spinDim), seed),
    ...measure('rho', rho, mean, seed),
    ...measure('chi_rho', f, (s) => susceptibility(s, n), seed),
    ...measure('binder_rho', f, (s) => binderCumulant(s, 1), seed),
    tau_m: tauM.mean,
    tau_m_se: tauM.se,
    tau_rho: tauRho.mean,
    tau_rho_se: tauRho.se,
    drift_m: drift(checkM),
    drift_m_se: checkM.se,
    drift_rho: drift(checkRho),
    drift_rho_se: checkRho.se,
    spread_m: trialsM.spread,
    equilibrated: !checkM.flagged && !checkRho.flagged && !trialsM.flagged,
  };
}

/**
 * Each (prompt, encoder)'s spin dimension: min(dim, k - 1), at least 1, for k distinct answers (response texts)
 * among the prompt's t = 0 answers, the pool its whitening is fitted on (the spins span at most k - 1 directions).
 */
export async function spinDimensions(
  out: string,
  runs: readonly { runId: string; prompt: { id: string } }[],
  encoders: readonly { name: string; dim: number }[],
): Promise<Map<string, number>> {
  const byPrompt = new Map<string, string[]>();
  for (const r of runs) byPrompt.set(r.prompt.id, [...(byPrompt.get(r.prompt.id) ?? []), shardPath(out, r.runId)]);
  const dims = new Map<string, number>();
  for (const [promptId, files] of byPrompt) {
    const [row] = await queryRows(
      `SELECT count(DISTINCT response)::INTEGER AS k FROM ${readParquetSql(files)} WHERE role = 'agent' AND sweep = 0`,
    );
    const k = Number(row?.k ?? 0);
    for (const e of encoders) dims.set(spinDimKey(promptId, e.name), Math.max(1, Math.min(e.dim, k - 1)));
  }
  return dims;
}

/** The table's rows for the measured runs (those with order parameters), spin dimensions read from their shards. */
export async function computePhaseRows(
  out: string,
  runs: readonly PhaseRun[],
  orderParams: readonly OrderParamRow[],
  encoders: readonly { name: string; dim: number }[],
): Promise<PhaseRow[]> {
  const measuredRuns = new Set(orderParams.map((p) => p.run_id));
  const kept = runs.filter((r) => measuredRuns.has(r.runId));
  if (kept.length === 0) return [];
  return phaseRows(kept, orderParams, await spinDimensions(out, kept, encoders), await latticeCorrelations(out, kept, encoders));
}

/** Writes `<out>/phase.parquet` whole; returns its path. */
export async function writePhaseTable(out: string, rows: readonly PhaseRow[]): Promise<string> {
  const file = phaseTablePath(out);
  await writeParquetTable(file, PHASE_TABLE, rows);
  return file;
}

const TOLERANCE = 1e-9;

/** The plateau-halves part of the equilibrated flag, from a row's drift columns (the rule before spread_m). */
function halvesAgree(row: PhaseRow): boolean {
  const flagged = (d: number | null, se: number | null) => d !== null && se !== null && Math.abs(d) > Z_EQUILIBRATION * se;
  return !flagged(row.drift_m, row.drift_m_se) && !flagged(row.drift_rho, row.drift_rho_se);
}

function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'boolean' || typeof b === 'boolean' || typeof a === 'string' || typeof b === 'string')
    return (a ?? null) === (b ?? null);
  const x = a === null || a === undefined ? null : Number(a);
  const y = b === null || b === undefined ? null : Number(b);
  if (x === null || y === null) return x === y;
  return Math.abs(x - y) <= TOLERANCE * Math.max(1, Math.abs(x), Math.abs(y));
}

/**
 * What `panta verify` finds wrong in phase.parquet against the rows recomputed from the order parameters of
 * the encoders it holds (an encoder `panta embed` added later has none): nothing when the corpus has no such
 * file (written before the table existed; the manifest's checksums say whether a listed one went missing).
 */
export async function checkPhaseTable(
  out: string,
  runs: readonly PhaseRun[],
  orderParams: readonly OrderParamRow[],
  encoders: readonly { name: string; dim: number }[],
): Promise<string[]> {
  const file = phaseTablePath(out);
  if (!existsSync(file)) return [];
  const stored = await queryRows(`SELECT * FROM ${readParquetSql([file])}`);
  // An encoder added later (panta embed) has order parameters but no rows here: the table holds the sweep's.
  const own = new Set(stored.map((r) => String(r.encoder)));
  const kept = encoders.filter((e) => own.has(e.name));
  const expected = await computePhaseRows(
    out,
    runs,
    orderParams.filter((p) => own.has(p.encoder)),
    kept,
  );
  const name = CORPUS_FILES.phase;
  if (stored.length !== expected.length) return [`${name} has ${stored.length} rows, the order parameters give ${expected.length}`];
  // A table written before spread_m: its rows are checked by the rule they were written with (the plateau halves alone).
  const columns =
    stored.length > 0 && !('spread_m' in stored[0]) ? PHASE_TABLE.columns.filter((c) => c.name !== 'spread_m') : PHASE_TABLE.columns;
  if (columns !== PHASE_TABLE.columns) for (const row of expected) row.equilibrated = halvesAgree(row);
  const byKey = new Map(stored.map((r) => [`${r.config_id}|${r.encoder}`, r]));
  const problems: string[] = [];
  for (const row of expected) {
    const s = byKey.get(`${row.config_id}|${row.encoder}`);
    const field = s ? firstDifference(columns, row, s, same) : 'row';
    if (field && problems.length < 5)
      problems.push(
        `${name}: ${row.config_id} (${row.encoder}) does not match the order parameters: ${field} ${s ? `${String(s[field])} stored, ${String(row[field as keyof PhaseRow])} recomputed` : 'missing'}`,
      );
  }
  return problems;
}

/**
 * phase.parquet's rows, checked against the declaration. A folder that is not a finished corpus, or one
 * written before the table existed, is one line naming the file and the fix (exit 2).
 */
export async function readPhaseTable(dir: string): Promise<PhaseRow[]> {
  if (!existsSync(dir)) throw new InputError(dir, '', 'no such folder', 'give the folder a sweep wrote (its --out)');
  const manifest = join(dir, CORPUS_FILES.manifest);
  if (!existsSync(manifest))
    throw new InputError(manifest, '', 'missing: this is not a Panta corpus', 'give the folder a sweep wrote (its --out)');
  const file = phaseTablePath(dir);
  if (!existsSync(file))
    throw new InputError(
      file,
      '',
      'missing: the sweep has not finished, or was written before phase.parquet existed',
      'finish the sweep (panta run resumes it), or run it again with this version',
    );
  try {
    return (await queryRows(`SELECT * FROM ${readParquetSql([file])}`)).map((r) => readRow(PHASE_TABLE, r));
  } catch (e) {
    throw new InputError(file, '', `cannot be read (${String((e as Error).message).split('\n')[0]})`, 'restore it, or re-run the sweep');
  }
}
