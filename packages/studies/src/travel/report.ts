import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type ArmObservation, armPairs, armSummaries, InputError, meanCi } from '@panta/core';
import { omitColumns, queryRows, type RowOf, readRow } from '@panta/corpus';
import { type Cell, type CorpusData, section, type Table } from '@panta/report';
import { withDepartures } from '../departures.js';
import { pearsonCi } from './correlation.js';
import { travelDomain } from './measures.js';
import { TRAVEL_JUDGE_FILE, TRAVEL_JUDGE_TABLE, type TravelJudgeRow } from './judge-consistency.js';
import { TRAVEL_TABLE, travelTablePath } from './table-schema.js';

/**
 * The travel experiment's tables (Hallucination as Context Drift, Tables 1, 2 and 3; docs/travel.md), from
 * travel.parquet. Runs are pooled over the scenarios, as the paper pools its trials over its 8 destinations
 * (every arm runs the same scenarios the same number of times); arms (protocols) are never pooled. The
 * statistics are core's: armSummaries (mean, 95% CI) and armPairs (Welch's t, two-tailed p, Cohen's d).
 */

/** The columns of travel.parquet the tables read. */
const TRAVEL_READ = omitColumns(TRAVEL_TABLE, [
  'config_id',
  'assertions_made',
  'assertions_wrong',
  'hr_note',
  'tcs_note',
  'detection_note',
  'recovery_note',
  'tcs_dims',
]);

export type TravelRow = RowOf<typeof TRAVEL_READ>;

/** The travel table of a corpus in file order; null when it has none. */
export async function loadTravel(dir: string): Promise<TravelRow[] | null> {
  const file = travelTablePath(dir);
  if (!existsSync(file)) return null;
  try {
    return (await queryRows(`SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`)).map((r) => readRow(TRAVEL_READ, r));
  } catch (e) {
    throw new InputError(file, '', `unreadable Parquet (${(e as Error).message.split('\n')[0]})`, 'run the sweep again to rewrite it');
  }
}

const CELL = 'all scenarios';

function observations(rows: readonly TravelRow[]): ArmObservation[] {
  return rows.map((r) => ({
    cell: CELL,
    arm: r.protocol,
    metrics: { hr: r.hr, tcs: r.tcs, calls: r.calls, detection_step: r.detection_step, recovery_steps: r.recovery_steps },
  }));
}

const CI = 'mean ± t(0.975, n − 1) · sd / √n over trials, empty where undefined (the note says why)';

/** Who scored HR and TCS, in words, for Table 1's caption. */
function judgedBy(rows: readonly TravelRow[]): string {
  const judges = [...new Set(rows.map((r) => r.judge ?? 'reference'))];
  const llm = judges.filter((j) => j !== 'reference');
  if (llm.length === 0) return 'reference judge: the dimensions with a checkable fact';
  const failures = rows.reduce((s, r) => s + (r.judge_failures ?? 0), 0);
  return `LLM judge ${llm.join(', ')}: every assertion and all five dimensions; ${failures} rubric ${failures === 1 ? 'reply' : 'replies'} failed and left out`;
}

/** Table 1 shape: HR per assertion and TCS per arm with 95% CI. */
export function travelTable1(rows: readonly TravelRow[]): Table {
  return {
    id: 'travel-hr-tcs',
    title: 'Travel: hallucination rate and task coherence by arm (95% CI)',
    caption:
      'HR: wrong over checkable assertions (airport, weather, schedule) of every answer of a trial; TCS: the final answers’ ' +
      `coherence on date, location, budget, schedule and recommendation (${judgedBy(rows)}). ${CI}. ` +
      'Pooled over the scenarios.',
    columns: ['arm', 'metric', 'trials', 'mean', '95% CI low', '95% CI high', 'note'],
    rows: armSummaries(observations(rows), ['hr', 'tcs']).map((s) => [s.arm, s.metric, s.n, s.mean, s.lo, s.hi, s.undefinedBecause]),
    empty: 'No travel run is complete yet.',
  };
}

/** A trial's calls as the paper counts them (task messages plus synchronisation calls); null for a table from before. */
const paperCount = (r: TravelRow): number | null => (r.task_calls === null || r.sync_calls === null ? null : r.task_calls + r.sync_calls);

/** Table 2 shape: calls per trial as the paper counts them, with the detection step and recovery steps of the trials that have them. */
export function travelTable2(rows: readonly TravelRow[]): Table {
  const arms = [...new Set(rows.map((r) => r.protocol))];
  const out: Cell[][] = arms.map((arm) => {
    const own = rows.filter((r) => r.protocol === arm);
    const calls = meanCi(own.map(paperCount));
    const detected = own.filter((r) => r.detection_step !== null);
    const det = meanCi(detected.map((r) => (r.detection_step as number) + 1));
    const rec = meanCi(own.map((r) => r.recovery_steps));
    return [
      arm,
      own.length,
      meanCi(own.map((r) => r.task_calls)).mean,
      meanCi(own.map((r) => r.sync_calls)).mean,
      calls.mean,
      calls.lo,
      calls.hi,
      meanCi(own.map((r) => r.calls)).mean,
      detected.length,
      detected.length === 0 ? null : det.mean,
      detected.length === 0 ? 'no merge names the contradiction' : null,
      rec.n === 0 ? null : rec.mean,
      rec.n === 0 ? 'no trial detected and recovered' : null,
    ];
  });
  return {
    id: 'travel-calls',
    title: 'Travel: API calls per trial, conflict-detection step and recovery steps by arm',
    caption:
      'calls as the paper counts them (its Table 2: no-sync 18, ssvp 53, full-broadcast 126), mean and 95% CI: task calls (the agents’ answers) ' +
      'plus sync calls (ssvp: its context summaries and merges; full-broadcast: one broadcast per agent and teammate at each exchange; no-sync: ' +
      'none). all calls: every call Panta made, with the summaries no-sync and full-broadcast write only to measure CDS. detection step: the ' +
      'first step at which a merge names the contradiction, in the paper’s numbering (step 1 is the roles’ first answers, step 2 the first ' +
      'exchange), mean over the trials where one does; recovery steps: steps from detection to the first step at which no answer states an ' +
      'injected value, mean over the trials that recover.',
    columns: [
      'arm',
      'trials',
      'task calls',
      'sync calls',
      'calls',
      '95% CI low',
      '95% CI high',
      'all calls',
      'trials detected',
      'detection step',
      'note',
      'recovery steps',
      'note',
    ],
    rows: out,
    empty: 'No travel run is complete yet.',
  };
}

/** Table 3 shape: Welch's t, two-tailed p and Cohen's d per pair of arms, on HR and TCS. */
export function travelTable3(rows: readonly TravelRow[]): Table {
  return {
    id: 'travel-tests',
    title: "Travel: Welch's t test and Cohen's d per pair of arms",
    caption:
      "Welch's t = (mean A − mean B) / √(sA²/nA + sB²/nB), Welch–Satterthwaite df, two-tailed p; Cohen's d = (mean A − mean B) / pooled SD. " +
      'Empty where undefined (fewer than two trials, or no variance): the note says why.',
    columns: ['metric', 'arm A', 'arm B', 'mean A', 'mean B', 'Welch t', 'df', 'p (two-tailed)', "Cohen's d", 'note'],
    rows: armPairs(observations(rows), ['hr', 'tcs']).map((p) => [
      p.metric,
      p.arm_a,
      p.arm_b,
      p.mean_a,
      p.mean_b,
      p.welch_t,
      p.welch_df,
      p.p_two_tailed,
      p.cohen_d,
      p.note,
    ]),
    empty: 'No travel run is complete yet.',
  };
}

/** CDS_sys(t) per arm and step: the mean over trials (trials without a value at a step left out). */
export function travelCdsTable(rows: readonly TravelRow[]): Table {
  const arms = [...new Set(rows.map((r) => r.protocol))];
  const steps = Math.max(0, ...rows.map((r) => r.cds_sys.length));
  const out: Cell[][] = [];
  for (const arm of arms)
    for (let s = 0; s < steps; s++) {
      const v = meanCi(rows.filter((r) => r.protocol === arm).map((r) => r.cds_sys[s]));
      out.push([arm, s + 2, v.n, v.mean, v.undefinedBecause]);
    }
  return {
    id: 'travel-cds',
    title: 'Travel: CDS_sys(t) by arm and step',
    caption:
      'per step from the first exchange (step 2 in the paper’s numbering, where step 1 is the roles’ first answers): the mean over trials of ' +
      'the mean over agents of their gate CDS (the largest cosine distance between the agent’s context summary and a teammate’s).',
    columns: ['arm', 'step', 'trials', 'CDS_sys', 'note'],
    rows: out,
    empty: 'No travel run is complete yet.',
  };
}

/** A trial's CDS_sys (max): the largest system divergence over its steps; null when no step has one. */
export function cdsSysMax(cds: readonly (number | null)[]): number | null {
  const v = cds.filter((x): x is number => x !== null);
  return v.length === 0 ? null : Math.max(...v);
}

/** Predictive validity (the paper's 5.3): Pearson's r between a trial's CDS_sys (max) and its HR, per arm, with a 95% CI. */
export function travelCdsHrTable(rows: readonly TravelRow[]): Table {
  const arms = [...new Set(rows.map((r) => r.protocol))];
  return {
    id: 'travel-cds-hr',
    title: 'Travel: Pearson r between CDS_sys (max) and HR by arm (95% CI)',
    caption:
      'per trial, CDS_sys (max): the largest CDS_sys(t) over its steps, against its HR; r over the trials with both, 95% CI by Fisher’s z ' +
      '(tanh(atanh r ∓ 1.96 / √(n − 3))). The paper reports r = −0.03 in no-sync: CDS does not predict HR without an intervention.',
    columns: ['arm', 'trials', 'r', '95% CI low', '95% CI high', 'note'],
    rows: arms.map((arm) => {
      const c = pearsonCi(rows.filter((r) => r.protocol === arm).map((r) => [cdsSysMax(r.cds_sys), r.hr] as const));
      return [arm, c.n, c.r, c.lo, c.hi, c.note];
    }),
    empty: 'No travel run is complete yet.',
  };
}

/** Table 4 shape (the paper's cross-domain comparison): HR per domain (travel, software sprint) and arm, mean and 95% CI. */
export function travelDomainTable(rows: readonly TravelRow[]): Table {
  const out: Cell[][] = [];
  for (const domain of ['travel', 'sprint'] as const) {
    const own = rows.filter((r) => travelDomain({ id: r.prompt_id }) === domain);
    for (const arm of [...new Set(own.map((r) => r.protocol))]) {
      const v = meanCi(own.filter((r) => r.protocol === arm).map((r) => r.hr));
      out.push([domain === 'travel' ? 'travel' : 'software sprint', arm, v.n, v.mean, v.lo, v.hi, v.undefinedBecause]);
    }
  }
  return {
    id: 'travel-domains',
    title: 'Cross-domain HR by arm: travel and the software-sprint replication (95% CI)',
    caption:
      'the paper’s Table 4 (travel: no-sync 0.492, ssvp 0.463, full-broadcast 0.658; software: 0.188, 0.150, 0.150). HR as in the ' +
      `travel table; the software-sprint scenarios are those whose id begins with sprint-. ${CI}.`,
    columns: ['domain', 'arm', 'trials', 'HR', '95% CI low', '95% CI high', 'note'],
    rows: out,
    empty: 'No travel run is complete yet.',
  };
}

/** travel_judge.parquet's row; null when the corpus has none (written before it existed). */
export async function loadJudgeConsistency(dir: string): Promise<TravelJudgeRow | null> {
  const file = join(dir, TRAVEL_JUDGE_FILE);
  if (!existsSync(file)) return null;
  const [row] = await queryRows(`SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`);
  return row ? readRow(TRAVEL_JUDGE_TABLE, row) : null;
}

/** The travel rubric's judge consistency (the paper's 4.4: kappa = 0.79 between two judge calls on 20 outputs). */
export function travelJudgeKappaTable(row: TravelJudgeRow | null): Table {
  return {
    id: 'travel-judge-kappa',
    title: 'Travel: judge consistency of the assertions rubric (Cohen’s kappa of two independent calls)',
    caption:
      'the paper’s check (κ = 0.79): 20 agent outputs drawn from the corpus, each sent twice to the assertions rubric as two calls of ' +
      'their own; κ between the two calls’ labels (correct, hallucinated, not addressed) over every (output, assertion); outputs a ' +
      'call failed on are left out.',
    columns: ['judge', 'outputs', 'outputs scored', 'labels', 'agreement', 'kappa', 'note'],
    rows: row ? [[row.judge, row.outputs, row.outputs_scored, row.labels, row.agreement, row.kappa, row.kappa_note]] : [],
    empty: 'The corpus has no travel_judge.parquet (written before the check existed).',
  };
}

/** What a travel report reads: travel.parquet's rows, the judge-consistency row, and the departures the corpus used. */
export interface TravelSource {
  rows: TravelRow[];
  consistency: TravelJudgeRow | null;
  departures: string[];
}

/**
 * The departures from the paper (docs/travel.md, "Departures from the paper") that this corpus used, in words:
 * the trial layout and the step count as its runs and spec show them, and the spec's own `departures`.
 */
export function travelDepartures(rows: readonly TravelRow[], spec: unknown): string[] {
  const out: string[] = [];
  const seen = new Map<string, string>();
  for (const r of rows) {
    const key = `${r.protocol}\u0000${r.trial}`;
    const before = seen.get(key);
    if (before !== undefined && before !== r.prompt_id) {
      out.push('every scenario run `trials` times (trial_prompts: every), not one scenario drawn per trial');
      break;
    }
    seen.set(key, r.prompt_id);
  }
  const s = (spec ?? {}) as { sweeps?: unknown; departures?: unknown };
  if (typeof s.sweeps === 'number' && s.sweeps + 1 !== 6) out.push(`${s.sweeps + 1} steps per trial (sweeps: ${s.sweeps}), not 6`);
  if (Array.isArray(s.departures)) for (const d of s.departures) if (typeof d === 'string') out.push(d);
  return out;
}

export { withDepartures };

async function loadSource(data: CorpusData, dir: string): Promise<TravelSource | null> {
  const rows = await loadTravel(dir);
  if (rows === null) return null;
  return { rows, consistency: await loadJudgeConsistency(dir), departures: travelDepartures(rows, data.manifest.spec) };
}

/** The travel experiment's section of the report catalog: travel.parquet and travel_judge.parquet (tables only). */
export const travelSection = section({
  name: 'travel',
  load: loadSource,
  figures: [],
  tables: [
    { ids: ['travel-hr-tcs'], make: (t) => withDepartures(travelTable1(t.rows), t.departures) },
    { ids: ['travel-calls'], make: (t) => withDepartures(travelTable2(t.rows), t.departures) },
    { ids: ['travel-tests'], make: (t) => withDepartures(travelTable3(t.rows), t.departures) },
    { ids: ['travel-cds'], make: (t) => withDepartures(travelCdsTable(t.rows), t.departures) },
    { ids: ['travel-cds-hr'], make: (t) => withDepartures(travelCdsHrTable(t.rows), t.departures) },
    { ids: ['travel-domains'], make: (t) => withDepartures(travelDomainTable(t.rows), t.departures) },
    { ids: ['travel-judge-kappa'], make: (t) => travelJudgeKappaTable(t.consistency) },
  ],
});
