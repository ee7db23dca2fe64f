import { join } from 'node:path';
import { cohenKappa, mixSeed, normaliseText, type Prompt, type RunPlan } from '@panta/core';
import { type AddedTable, defineTable, queryRows, type RowOf, type RubricJudge, readParquetSql, writeParquetTable } from '@panta/corpus';
import { storedReplies } from './judge-store.js';
import { parseAssertionReply, TRAVEL_VERDICT_MAX_TOKENS, travelRubric, travelVerdictKey } from './rubric.js';
import { isTravelRun, travelEventRows } from './table-rows.js';

/**
 * The travel rubric's judge consistency, as the paper measured it (Hallucination as Context Drift 4.4:
 * "Inter-rater agreement between two independent judge calls on 20 sampled outputs yielded kappa = 0.79"): 20
 * agent outputs drawn from the corpus, each sent twice to the assertions rubric as two calls of their own
 * (keys and seeds apart from the verdicts HR uses, so neither is the other's cached reply), and Cohen's kappa
 * between the two calls' labels (correct, hallucinated, not addressed) over every (output, assertion).
 */

/** Outputs sampled, as in the paper. */
export const CONSISTENCY_OUTPUTS = 20;

export const TRAVEL_JUDGE_TABLE = defineTable('travel_judge', [
  { name: 'judge', type: 'VARCHAR', meaning: 'judge name: reference, or the LLM judge backend:model' },
  { name: 'outputs', type: 'INTEGER', meaning: 'agent outputs sampled for the consistency check (count)' },
  { name: 'outputs_scored', type: 'INTEGER', meaning: 'sampled outputs both calls replied to (count)' },
  { name: 'labels', type: 'INTEGER', meaning: 'labels compared: outputs scored x assertions (count)' },
  { name: 'agreement', type: 'DOUBLE', nullable: true, meaning: 'observed agreement of the two calls (share)' },
  { name: 'kappa', type: 'DOUBLE', nullable: true, meaning: "Cohen's kappa of the two calls" },
  { name: 'kappa_note', type: 'VARCHAR', nullable: true, meaning: 'why kappa is undefined, where it is' },
]);

export type TravelJudgeRow = RowOf<typeof TRAVEL_JUDGE_TABLE>;

export const TRAVEL_JUDGE_FILE = 'travel_judge.parquet';

/** One sampled output: the scenario and the answer. */
export interface ConsistencySample {
  prompt: Prompt;
  answer: string;
}

/**
 * The outputs the check sends: the distinct (scenario, normalised answer) pairs of the travel runs' answers,
 * ordered by a hash of each (a uniform draw that depends on the corpus alone), the first `count`.
 */
export function consistencySample(answers: readonly ConsistencySample[], count = CONSISTENCY_OUTPUTS): ConsistencySample[] {
  const distinct = new Map<string, ConsistencySample>();
  for (const a of answers) distinct.set(`${a.prompt.id}\u0000${normaliseText(a.answer)}`, a);
  return [...distinct]
    .map(([key, a]) => ({ a, h: mixSeed('judge-consistency', key) }))
    .sort((x, y) => x.h - y.h || (x.a.prompt.id < y.a.prompt.id ? -1 : 1))
    .slice(0, count)
    .map((x) => x.a);
}

/** The verdict store's key of call `call` (1 or 2) of the consistency check on one output. */
export function consistencyKey(call: 1 | 2, s: ConsistencySample): string {
  return `${travelVerdictKey('assertions', s.prompt.id, s.answer)}\u0000consistency-${call}`;
}

const LABEL = { right: 'correct', wrong: 'hallucinated', both: 'not_addressed', absent: 'not_addressed' } as const;

/** The table's row from the two calls' replies per sample (null: that call failed). */
export function consistencyRow(
  judge: string,
  samples: readonly ConsistencySample[],
  replies: readonly [string | null, string | null][],
): TravelJudgeRow {
  const a: string[] = [];
  const b: string[] = [];
  let scored = 0;
  samples.forEach((s, i) => {
    const assertions = s.prompt.assertions ?? [];
    const [x, y] = replies[i].map((t) => (t === null ? null : parseAssertionReply(t, assertions)));
    if (!x || !y) return;
    scored++;
    x.forEach((v, j) => {
      a.push(LABEL[v]);
      b.push(LABEL[y[j]]);
    });
  });
  const k = cohenKappa(a, b);
  const failed = samples.length - scored;
  const note = k.undefinedBecause ?? (failed > 0 ? `${failed} of ${samples.length} outputs left out (a call failed)` : null);
  return { judge, outputs: samples.length, outputs_scored: scored, labels: k.n, agreement: k.agreement, kappa: k.kappa, kappa_note: note };
}

const REFERENCE_NOTE =
  'the reference judge is a deterministic phrase check: two calls cannot disagree, so there is no consistency to measure';

/** Every travel run's answers, as samples. */
async function answersOf(out: string, complete: readonly RunPlan[]): Promise<ConsistencySample[]> {
  const travel = complete.filter(isTravelRun);
  const byRun = await travelEventRows(out, travel);
  return travel.flatMap((run) =>
    (byRun.get(run.runId) ?? []).filter((r) => r.role === 'agent').map((r) => ({ prompt: run.prompt, answer: r.response })),
  );
}

/** The row, asking the judge (at finish) or reading its stored replies (verify); the reference judge's row has no kappa. */
async function judgeRow(
  out: string,
  complete: readonly RunPlan[],
  model: string | null,
  reply: (key: string, s: ConsistencySample) => Promise<string | null>,
): Promise<TravelJudgeRow> {
  if (model === null)
    return { judge: 'reference', outputs: 0, outputs_scored: 0, labels: 0, agreement: null, kappa: null, kappa_note: REFERENCE_NOTE };
  const samples = consistencySample(await answersOf(out, complete));
  const replies = await Promise.all(
    samples.map(
      async (s) => [await reply(consistencyKey(1, s), s), await reply(consistencyKey(2, s), s)] as [string | null, string | null],
    ),
  );
  return consistencyRow(model, samples, replies);
}

function ask(judge: RubricJudge) {
  return (key: string, s: ConsistencySample) =>
    judge.rubricReply(
      key,
      travelRubric('assertions', s.prompt, s.answer),
      TRAVEL_VERDICT_MAX_TOKENS,
      (t) => parseAssertionReply(t, s.prompt.assertions ?? []) !== null,
    );
}

/** travel_judge.parquet: one row, the travel rubric's judge consistency (kappa of two independent calls on 20 outputs). */
export const travelJudgeTable: AddedTable = {
  name: 'travel_judge',
  file: TRAVEL_JUDGE_FILE,
  decl: TRAVEL_JUDGE_TABLE,
  optional: true,
  applies: (runs: readonly RunPlan[]) => runs.some(isTravelRun),
  async write(out, complete, judge) {
    const row = await judgeRow(out, complete, judge?.model ?? null, judge ? ask(judge) : async () => null);
    await writeParquetTable(join(out, TRAVEL_JUDGE_FILE), TRAVEL_JUDGE_TABLE, [row]);
  },
  async check(out, runs) {
    const [stored] = await queryRows(`SELECT * FROM ${readParquetSql([join(out, TRAVEL_JUDGE_FILE)])}`);
    const judge = stored && typeof stored.judge === 'string' && stored.judge !== 'reference' ? stored.judge : null;
    const replies = judge ? storedReplies(out) : new Map<string, string>();
    const expected = await judgeRow(out, runs, judge, async (key) => replies.get(key) ?? null);
    const problems: string[] = [];
    for (const c of TRAVEL_JUDGE_TABLE.columns) {
      const s = stored?.[c.name] ?? null;
      const e = expected[c.name as keyof TravelJudgeRow];
      const x = typeof s === 'bigint' ? Number(s) : s;
      const same = typeof x === 'number' && typeof e === 'number' ? Math.abs(x - e) <= 1e-9 : x === e;
      if (!same) problems.push(`${TRAVEL_JUDGE_FILE}: ${c.name} ${JSON.stringify(x)} stored, ${JSON.stringify(e)} recomputed`);
    }
    return problems;
  },
};
