import type { Prompt } from '@panta/core';
import { meanOf } from './judged.js';
import {
  type AssertionVerdict,
  assertionVerdicts,
  countAssertions,
  detectionStep,
  hallucinationRate,
  recoverySteps,
  type Assertions,
} from './measures.js';

/**
 * One travel run's row of travel.parquet (docs/travel.md), from its shard rows. A step is a sweep (0 is the
 * roles' first answers, before any exchange).
 */

/** The shard columns the measures read. */
export interface TravelEventRow {
  role: string;
  sweep: number;
  response: string;
  /** agent rows: the largest CDS between the agent's summary and a neighbour's (summary protocols, sweep >= 1). */
  divergence: number | null;
}

/** TCS's five dimensions, as the paper names them, and the assertion each is checked on (null: none). */
export const TCS_DIMENSIONS: readonly { name: string; assertion: string | null }[] = [
  { name: 'date', assertion: null },
  { name: 'location', assertion: 'airport' },
  { name: 'budget', assertion: null },
  { name: 'schedule', assertion: 'schedule' },
  { name: 'recommendation', assertion: 'weather' },
];

export interface TravelRunMeasures {
  assertions_made: number;
  assertions_wrong: number;
  /** HR per assertion over every answer of the run. */
  hr: number | null;
  hr_note: string | null;
  /** Task coherence of the final step's answers, 0..1, mean over the dimensions they state. */
  tcs: number | null;
  tcs_note: string | null;
  /** Per TCS dimension (TCS_DIMENSIONS' order): its score, null where unscored. */
  tcs_dims: (number | null)[];
  /** LLM-judge replies that failed: assertion rubrics (those answers left out of HR) plus TCS rubrics (left out of TCS); 0 for the reference check. */
  judge_failures: number;
  /** First step at which a merge names the contradiction. */
  detection_step: number | null;
  detection_note: string | null;
  recovery_steps: number | null;
  recovery_note: string | null;
  /** Every call of the run (answers, summaries, merges). */
  calls: number;
  /** Per step 1..S: the mean over agents of their gate CDS (null where no agent has one). */
  cds_sys: (number | null)[];
}

/**
 * TCS by the reference judge: per dimension with an assertion, the share of the final answers stating it that
 * state the gold value; dimensions no final answer states (and date and budget, which carry no checkable
 * assertion here) are not scored; TCS is the mean of the scored ones.
 */
export function referenceTcs(
  finalAnswers: readonly string[],
  assertions: Assertions,
): { value: number | null; note: string | null; dims: (number | null)[] } {
  const scores: number[] = [];
  const dims: (number | null)[] = TCS_DIMENSIONS.map(() => null);
  for (const d of TCS_DIMENSIONS) {
    const i = d.assertion === null ? -1 : assertions.findIndex((a) => a.name === d.assertion);
    if (i < 0) continue;
    const at = TCS_DIMENSIONS.indexOf(d);
    let right = 0;
    let stated = 0;
    for (const text of finalAnswers) {
      const v = assertionVerdicts(text, assertions)[i];
      if (v === 'right' || v === 'wrong') stated++;
      if (v === 'right') right++;
    }
    if (stated > 0) scores.push((dims[at] = right / stated));
  }
  if (scores.length === 0) return { value: null, note: 'no final answer states a checkable fact', dims };
  return { value: scores.reduce((s, x) => s + x, 0) / scores.length, note: null, dims };
}

/** One prompt's LLM-judge verdicts (TravelJudgement bound to the run's prompt); null: the judge failed on that text. */
export interface RunJudgement {
  verdicts(answer: string): AssertionVerdict[] | null;
  tcs(answer: string): (number | null)[] | null;
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** HR from the LLM judge's verdicts: answers it failed on are left out, and the note says how many. */
function judgedHr(answers: readonly string[], judge: RunJudgement) {
  let made = 0;
  let wrong = 0;
  let failed = 0;
  for (const a of answers) {
    const v = judge.verdicts(a);
    if (v === null) failed++;
    else
      for (const x of v) {
        if (x === 'right' || x === 'wrong') made++;
        if (x === 'wrong') wrong++;
      }
  }
  const excluded = failed > 0 ? `${plural(failed, 'answer')} of ${answers.length} excluded (judge failure)` : null;
  const hr = hallucinationRate({ made, wrong });
  const note =
    hr.value !== null
      ? excluded
      : failed === answers.length && failed > 0
        ? 'the judge failed on every answer'
        : excluded
          ? `${excluded}; the rest state no checkable fact`
          : hr.note;
  return { made, wrong, failed, value: hr.value, note };
}

/** TCS from the LLM judge's scores of the final answers: per dimension the mean over the answers scoring it, then the mean of the dimensions scored. */
function judgedTcs(finals: readonly string[], judge: RunJudgement) {
  const per: number[][] = TCS_DIMENSIONS.map(() => []);
  let failed = 0;
  for (const a of finals) {
    const s = judge.tcs(a);
    if (s === null) failed++;
    else s.forEach((x, i) => x !== null && per[i].push(x));
  }
  const dims = per.map(meanOf);
  const value = meanOf(dims.filter((x): x is number => x !== null));
  const excluded = failed > 0 ? `${plural(failed, 'final answer')} of ${finals.length} excluded (judge failure)` : null;
  const note =
    value !== null
      ? excluded
      : failed === finals.length
        ? 'the judge failed on every final answer'
        : `${excluded ? `${excluded}; ` : ''}no final answer says anything on the five dimensions`;
  return { value, note, dims, failed };
}

/**
 * One run's measures. HR and TCS come from `judge` when given (the sweep's LLM judge), else from the
 * reference check; detection and recovery are always the reference check's (a merge naming both values).
 */
export function travelRunMeasures(
  prompt: Pick<Prompt, 'assertions'>,
  rows: readonly TravelEventRow[],
  sweeps: number,
  judge?: RunJudgement,
): TravelRunMeasures {
  const assertions = prompt.assertions ?? [];
  const answers = rows.filter((r) => r.role === 'agent');
  const texts = answers.map((r) => r.response);
  const judged = judge ? judgedHr(texts, judge) : null;
  const counts = judged ?? countAssertions(texts, assertions);
  const hr = judged ?? hallucinationRate(counts);
  const last = Math.max(-1, ...answers.map((r) => r.sweep));
  const finals = answers.filter((r) => r.sweep === last).map((r) => r.response);
  const tcs =
    last < 0
      ? { value: null, note: 'the run has no answer', dims: TCS_DIMENSIONS.map(() => null), failed: 0 }
      : judge
        ? judgedTcs(finals, judge)
        : { ...referenceTcs(finals, assertions), failed: 0 };
  const merges = rows.filter((r) => r.role === 'merge');
  const detected = detectionStep(
    merges.map((m) => ({ step: m.sweep, text: m.response })),
    assertions,
  );
  const wrongAt: boolean[] = [];
  for (let s = 0; s <= sweeps; s++)
    wrongAt.push(answers.some((r) => r.sweep === s && assertionVerdicts(r.response, assertions).includes('wrong')));
  const recovery = recoverySteps(wrongAt, detected);
  const cds: (number | null)[] = [];
  for (let s = 1; s <= sweeps; s++) {
    const gates = answers.filter((r) => r.sweep === s && r.divergence !== null).map((r) => r.divergence as number);
    // Clamped at 0: a cosine distance of identical summaries can come out a rounding error below it.
    cds.push(gates.length === 0 ? null : Math.max(0, gates.reduce((a, b) => a + b, 0) / gates.length));
  }
  return {
    assertions_made: counts.made,
    assertions_wrong: counts.wrong,
    hr: hr.value,
    hr_note: hr.note,
    tcs: tcs.value,
    tcs_note: tcs.note,
    tcs_dims: tcs.dims,
    judge_failures: (judged?.failed ?? 0) + tcs.failed,
    detection_step: detected,
    detection_note:
      detected !== null
        ? null
        : merges.length === 0
          ? 'no merge (the arm makes none, or no pair passed tau)'
          : 'no merge names the contradiction',
    recovery_steps: recovery.value,
    recovery_note: recovery.note,
    calls: rows.length,
    cds_sys: cds,
  };
}
