import type { Prompt } from '@panta/core';
import { meanOf } from './judged.js';
import {
  type AssertionVerdict,
  assertionVerdicts,
  countAssertions,
  detectionStep,
  hasTcs,
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

export interface TravelRunMeasures extends PaperCalls {
  assertions_made: number;
  assertions_wrong: number;
  /** HR per assertion over every answer of the run. */
  hr: number | null;
  hr_note: string | null;
  /** Task coherence of the final itinerary (the final step's answers), 0..1, mean over the dimensions it states. */
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
 * The final itinerary the paper's TCS scores: the team's plan as it stands after the last step, that is the
 * final step's answers of every role, in agent order, one block each.
 */
export function finalItinerary(finalAnswers: readonly string[]): string {
  return finalAnswers.join('\n\n');
}

/** A dimension's score from what the itinerary states about its assertion: right 1, wrong 0, both 0.5 (it contradicts itself). */
const ITINERARY_SCORE = { right: 1, wrong: 0, both: 0.5, absent: null } as const;

/**
 * TCS by the reference judge, on the final itinerary: per dimension with an assertion, 1 when the itinerary
 * states the gold value only, 0 when it states the injected one only, 0.5 when it states both (a plan with
 * Barcelona days and Lisbon flights); dimensions it does not state (and date and budget, which carry no
 * checkable assertion here) are not scored; TCS is the mean of the scored ones.
 */
export function referenceTcs(
  itinerary: string,
  assertions: Assertions,
): { value: number | null; note: string | null; dims: (number | null)[] } {
  const verdicts = assertionVerdicts(itinerary, assertions);
  const dims: (number | null)[] = TCS_DIMENSIONS.map((d) => {
    const i = d.assertion === null ? -1 : assertions.findIndex((a) => a.name === d.assertion);
    return i < 0 ? null : ITINERARY_SCORE[verdicts[i]];
  });
  const scores = dims.filter((x): x is number => x !== null);
  if (scores.length === 0) return { value: null, note: 'the final itinerary states no checkable fact', dims };
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

/** TCS from the LLM judge's scores of the final itinerary: the mean of the dimensions scored. */
function judgedTcs(itinerary: string, judge: RunJudgement) {
  const s = judge.tcs(itinerary);
  if (s === null) return { value: null, note: 'the judge failed on the final itinerary', dims: TCS_DIMENSIONS.map(() => null), failed: 1 };
  const dims = TCS_DIMENSIONS.map((_d, i) => s[i] ?? null);
  const value = meanOf(dims.filter((x): x is number => x !== null));
  return { value, note: value === null ? 'the final itinerary says nothing on the five dimensions' : null, dims, failed: 0 };
}

/** How the paper counts a trial's calls (section 5.5): its task messages, and the calls its synchronisation adds. */
export interface PaperCalls {
  /** The agents' answers: the paper's task messages (no-sync's 18 calls = 3 agents x 6 steps). */
  task_calls: number;
  /**
   * Synchronisation calls: ssvp's context summaries and merges; full-broadcast's broadcasts, one per agent and
   * teammate at every exchange (each agent's complete context sent to each other agent); none for no-sync, whose
   * summaries are written only to measure CDS.
   */
  sync_calls: number;
}

/** The paper's call count of one run, from its rows; `arm` is the run's protocol and team size. */
export function paperCalls(rows: readonly TravelEventRow[], arm: { protocol: string; n: number }): PaperCalls {
  const answers = rows.filter((r) => r.role === 'agent');
  const sync =
    arm.protocol === 'full-broadcast'
      ? answers.filter((r) => r.sweep >= 1).length * (arm.n - 1)
      : arm.protocol === 'no-sync'
        ? 0
        : rows.filter((r) => r.role === 'summary' || r.role === 'merge').length;
  return { task_calls: answers.length, sync_calls: sync };
}

/** TCS's note on the software-sprint scenarios, which the paper scores on HR only (its Table 4). */
export const SPRINT_TCS_NOTE = 'the software-sprint replication is scored on HR only (the paper’s Table 4)';

/**
 * One run's measures. HR and TCS come from `judge` when given (the sweep's LLM judge), else from the
 * reference check; detection and recovery are always the reference check's (a merge naming both values).
 */
export function travelRunMeasures(
  prompt: Pick<Prompt, 'assertions'> & { id?: string },
  rows: readonly TravelEventRow[],
  sweeps: number,
  judge?: RunJudgement,
  arm: { protocol: string; n: number } = { protocol: 'ssvp', n: 3 },
): TravelRunMeasures {
  const assertions = prompt.assertions ?? [];
  const answers = rows.filter((r) => r.role === 'agent');
  const texts = answers.map((r) => r.response);
  const judged = judge ? judgedHr(texts, judge) : null;
  const counts = judged ?? countAssertions(texts, assertions);
  const hr = judged ?? hallucinationRate(counts);
  const last = Math.max(-1, ...answers.map((r) => r.sweep));
  const itinerary = finalItinerary(answers.filter((r) => r.sweep === last).map((r) => r.response));
  const tcs = !hasTcs(prompt)
    ? { value: null, note: SPRINT_TCS_NOTE, dims: TCS_DIMENSIONS.map(() => null), failed: 0 }
    : last < 0
      ? { value: null, note: 'the run has no answer', dims: TCS_DIMENSIONS.map(() => null), failed: 0 }
      : judge
        ? judgedTcs(itinerary, judge)
        : { ...referenceTcs(itinerary, assertions), failed: 0 };
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
    ...paperCalls(rows, arm),
    cds_sys: cds,
  };
}
