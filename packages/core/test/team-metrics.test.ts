import { describe, expect, it } from 'vitest';
import {
  factsFound,
  parseDataset,
  type Prompt,
  readDriftVerdict,
  scoreAnswer,
  type TeamEventRow,
  teamDrift,
  teamTurns,
} from '../src/index.js';

const prompt = (p: Partial<Prompt>): Prompt => ({
  id: 'p',
  question: 'q',
  accepted: ['x'],
  false_answers: [],
  false_premise: false,
  source: '',
  ...p,
});

describe('team scores', () => {
  const multi = prompt({ accepted: ['Beijing'], facts: ['Beijing', 'Paris', 'Moscow', 'London', 'Washington'] });

  it('fact recall is the share of gold facts found as whole words; exact match needs them all', () => {
    // Beijing, Paris, London found; "Moscows" is not the word Moscow; Washington missing: 3/5.
    const s = scoreAnswer(multi, 'The capitals: BEIJING, paris; Moscows and London.');
    expect(s).toEqual({ exact_match: 0, fact_recall: 3 / 5 });
    expect(scoreAnswer(multi, 'London, Paris, Washington, Moscow and Beijing')).toEqual({ exact_match: 1, fact_recall: 1 });
    expect(factsFound(['1,729', "Fermat's"], 'it is 1729 by fermats theorem')).toEqual([true, true]);
  });

  it('not known, judge failures and a missing answer score 0; a judge tag decides single answers', () => {
    expect(scoreAnswer(multi, 'Beijing Paris Moscow London Washington', 'judge_failure')).toEqual({ exact_match: 0, fact_recall: 0 });
    expect(scoreAnswer(multi, 'Beijing Paris Moscow London Washington', 'not_known')).toEqual({ exact_match: 0, fact_recall: 0 });
    expect(scoreAnswer(multi, null)).toEqual({ exact_match: 0, fact_recall: 0 });
    const single = prompt({ accepted: ['Juneau'], false_answers: ['Anchorage'] });
    expect(scoreAnswer(single, 'It is Juneau.')).toEqual({ exact_match: 1, fact_recall: 1 });
    expect(scoreAnswer(single, 'Juneau or Anchorage')).toEqual({ exact_match: 0, fact_recall: 0 });
    expect(scoreAnswer(single, 'Anchorage', 'correct')).toEqual({ exact_match: 1, fact_recall: 1 });
  });

  it('a multiple-choice answer is exact only when it names the gold option and no other', () => {
    const mc = prompt({ accepted: ['refuted'], false_answers: ['supported'], choices: ['supported', 'refuted'] });
    expect(scoreAnswer(mc, 'Refuted.').exact_match).toBe(1);
    expect(scoreAnswer(mc, 'supported').exact_match).toBe(0);
    expect(scoreAnswer(mc, 'supported or refuted').exact_match).toBe(0);
  });
});

describe('problem drift of a debate (FOCUS, onset, recovery)', () => {
  it('matches a hand computation on seven turns', () => {
    // scores 1, 1, 0, 0, 1, 0, 1: FOCUS 0, -1, 0, +1, -1, +1 (sum 0); turns 2 and 3 are below the best
    // earlier (1) two in a row -> onset 2; turn 4 is back at 1 -> recovered; turn 5 is below alone, no run.
    const d = teamDrift([1, 1, 0, 0, 1, 0, 1]);
    expect(d.focus).toEqual([0, -1, 0, 1, -1, 1]);
    expect(d.focus_total).toBe(0);
    expect(d.drift_onset).toBe(2);
    expect(d.recovered).toBe(true);
    expect(d.drifting).toEqual([false, false, true, true, false, false, false]);
  });

  it('partial scores: below an earlier best, not only the previous turn; no recovery when never back', () => {
    // 0.4, 0.8, 0.6, 0.7, 0.5: turns 2, 3, 4 are all below 0.8 -> onset 2, never back to 0.8.
    const d = teamDrift([0.4, 0.8, 0.6, 0.7, 0.5]);
    expect(d.drift_onset).toBe(2);
    expect(d.recovered).toBe(false);
    expect(d.focus_total).toBeCloseTo(0.1, 12);
    expect(d.drifting).toEqual([false, false, true, true, true]);
  });

  it('is defined on every degenerate series: one turn, all equal, all zero, missing turns', () => {
    expect(teamDrift([1])).toEqual({ focus: [], focus_total: null, drift_onset: null, recovered: null, drifting: [false] });
    expect(teamDrift([0, 0, 0]).drift_onset).toBeNull();
    expect(teamDrift([1, 1, 1]).focus_total).toBe(0);
    expect(teamDrift([])).toEqual({ focus: [], focus_total: null, drift_onset: null, recovered: null, drifting: [] });
    // A missing turn breaks a run and has no FOCUS on either side.
    const d = teamDrift([1, 0, null, 0]);
    expect(d.focus).toEqual([-1, null, null]);
    expect(d.drift_onset).toBeNull();
  });
});

describe('prompt sets with facts and choices', () => {
  it('reads facts and choices, and refuses an accepted answer outside the choices in one line', () => {
    const ok = parseDataset(
      '{"id":"a","question":"q","accepted":["refuted"],"false_premise":false,"choices":["supported","refuted"],"facts":["x"]}\n',
      'set.jsonl',
    );
    expect(ok[0].choices).toEqual(['supported', 'refuted']);
    expect(ok[0].facts).toEqual(['x']);
    // A prompt without the new fields parses to the same object as before (no new keys).
    const plain = parseDataset('{"id":"b","question":"q","accepted":["y"],"false_premise":false}\n', 'set.jsonl');
    expect(Object.keys(plain[0]).sort()).toEqual(['accepted', 'false_answers', 'false_premise', 'id', 'question', 'source']);
    expect(() =>
      parseDataset('{"id":"a","question":"q","accepted":["maybe"],"false_premise":false,"choices":["supported","refuted"]}\n', 'set.jsonl'),
    ).toThrow(/set\.jsonl.*line 1: accepted.*"maybe" is not one of the choices.*write each accepted answer exactly as one of the choices/);
    expect(() => parseDataset('{"id":"a","question":"q","accepted":["y"],"false_premise":false,"facts":[]}\n', 'set.jsonl')).toThrow(
      /line 1: facts/,
    );
  });
});

describe('team turns from event rows (docs/teams.md)', () => {
  const mc = prompt({ accepted: ['refuted'], false_answers: ['supported'], choices: ['supported', 'refuted'] });
  let ev = 0;
  const row = (role: string, sweep: number, response: string, extra: Partial<TeamEventRow> = {}): TeamEventRow => ({
    event: ev++,
    role,
    sweep,
    agent: 0,
    response,
    reply_status: 'ok',
    tag: null,
    prompt_tokens: 10,
    completion_tokens: 2,
    ...extra,
  });

  it('a debate of 2 personas and 4 turns: the last unskipped solution of each turn, FOCUS, drift, verdicts, costs', () => {
    ev = 0;
    const free = { prompt_tokens: 0, completion_tokens: 0 };
    const rows: TeamEventRow[] = [
      row('persona-gen', 0, 'p1\np2'),
      // turn 1: solution refuted (1)
      row('persona', 1, 'refuted'),
      row('persona', 1, 'supported'),
      row('vote', 1, '1'),
      row('vote', 1, '1'),
      row('solution', 1, 'refuted', free),
      // turn 2: solution supported (0); the judge says drift; regenerated, still supported
      row('persona', 2, 'supported'),
      row('persona', 2, 'supported'),
      row('vote', 2, '1'),
      row('vote', 2, '2'),
      row('solution', 2, 'supported', free),
      row('drift-judge', 2, 'DRIFT: lack of progress'),
      row('persona', 2, 'supported'),
      row('persona', 2, 'supported'),
      row('vote', 2, '1'),
      row('vote', 2, '1'),
      row('solution', 2, 'Supported.', free),
      // turn 3: supported (0); the judge's reply is empty (failure)
      row('persona', 3, 'x'),
      row('persona', 3, 'x'),
      row('vote', 3, '1'),
      row('vote', 3, '1'),
      row('solution', 3, 'supported', free),
      row('drift-judge', 3, '', { reply_status: 'empty', completion_tokens: 0 }),
      // turn 4: refuted again (1); judge says no drift; the regeneration planned was skipped
      row('persona', 4, 'refuted'),
      row('persona', 4, 'refuted'),
      row('vote', 4, '1'),
      row('vote', 4, '1'),
      row('solution', 4, 'refuted', free),
      row('drift-judge', 4, 'NO DRIFT'),
      row('persona', 4, '', { reply_status: 'skipped', ...free }),
      row('solution', 4, '', { reply_status: 'skipped', ...free }),
    ];
    const t = teamTurns('debate', mc, rows.reverse());
    expect(t.map((x) => x.turn)).toEqual([1, 2, 3, 4]);
    expect(t.map((x) => x.exact_match)).toEqual([1, 0, 0, 1]);
    expect(t[1].answer).toBe('Supported.');
    expect(t[1].answer_event).toBe(16);
    expect(t.map((x) => x.focus)).toEqual([null, -1, 0, 1]);
    expect(t.map((x) => x.drifting)).toEqual([false, true, true, false]);
    expect(t.every((x) => x.drift_onset === 2 && x.recovered === true)).toBe(true);
    expect(t.map((x) => x.judge_verdict)).toEqual([null, 'drift', 'failure', 'no_drift']);
    expect(t.map((x) => x.regenerated)).toEqual([false, true, false, false]);
    // Calls: turn 1 = persona-gen + 2 personas + 2 votes = 5; turn 2 = 4 + judge + 4 = 9; turn 3 = 4 + judge = 5;
    // turn 4 = 4 + judge = 5 (skipped rows and solutions count nothing).
    expect(t.map((x) => x.calls)).toEqual([5, 9, 5, 5]);
    expect(t.map((x) => x.prompt_tokens)).toEqual([50, 90, 50, 50]);
    expect(t.map((x) => x.completion_tokens)).toEqual([10, 18, 8, 10]);
  });

  it('relay and hub: one turn, the last hop or the aggregation, every call counted', () => {
    ev = 0;
    const multi = prompt({ accepted: ['a'], facts: ['Paris', 'Rome', 'Oslo'] });
    const relay = teamTurns('relay', multi, [row('relay', 0, 'Paris Rome Oslo'), row('relay', 1, 'Paris and Oslo')]);
    expect(relay).toHaveLength(1);
    expect(relay[0]).toMatchObject({ turn: 1, answer_event: 1, exact_match: 0, calls: 2, prompt_tokens: 20, judge_verdict: null });
    expect(relay[0].fact_recall).toBeCloseTo(2 / 3, 12);
    const hub = teamTurns('hub', multi, [
      row('orchestrator', 0, 'a\nb'),
      row('worker', 1, 'Paris'),
      row('worker', 1, 'Rome'),
      row('aggregator', 2, 'Oslo, Rome and Paris'),
    ]);
    expect(hub[0]).toMatchObject({ exact_match: 1, fact_recall: 1, calls: 4 });
    // No answer row at all: defined, scored 0.
    expect(teamTurns('hub', multi, [row('orchestrator', 0, 'a')])[0]).toMatchObject({ answer: null, exact_match: 0, fact_recall: 0 });
  });

  it('reads DRIFTJudge replies: drift, no drift, anything else a failure', () => {
    expect(readDriftVerdict('DRIFT: task non-compliance', 'ok')).toBe('drift');
    expect(readDriftVerdict('  no drift.', 'ok')).toBe('no_drift');
    expect(readDriftVerdict('maybe', 'ok')).toBe('failure');
    expect(readDriftVerdict('DRIFT', 'unparsable')).toBe('failure');
  });
});
