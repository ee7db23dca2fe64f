import { describe, expect, it } from 'vitest';
import type { Prompt } from '@panta/core';
import {
  assertionReplyText,
  parseAssertionReply,
  parseTcsReply,
  parseTravelRubric,
  SPRINT_ASSERTIONS_SYSTEM,
  TRAVEL_ASSERTIONS_SYSTEM,
  tcsReplyText,
  travelRubric,
  travelVerdictKey,
} from '../src/travel/rubric.js';
import { type TravelEventRow, travelRunMeasures } from '../src/travel/run-measures.js';

const A = [
  { name: 'airport', gold: ['BCN'], wrong: ['LIS'] },
  { name: 'weather', gold: ['22 C'], wrong: ['14 C'] },
];
const prompt = { id: 'p', question: 'Plan a trip to Barcelona, 12 to 16 May, 2,400 EUR.', assertions: A } as unknown as Prompt;

const m = (p: Prompt) => travelRubric('assertions', p, 'web app');

describe('the LLM judge’s travel rubrics (HR per assertion, TCS on five dimensions)', () => {
  it('builds each rubric with the task, the ground truth and the answer, and reads them back', () => {
    const answer = 'Day 1: fly into BCN.\nDay 2: beach.';
    const m = travelRubric('assertions', prompt, answer);
    expect(m.user).toContain('- airport: true value BCN; known wrong values LIS');
    expect(parseTravelRubric(m)).toEqual({ kind: 'assertions', question: prompt.question, answer });
    expect(parseTravelRubric(travelRubric('tcs', prompt, answer))).toEqual({ kind: 'tcs', question: prompt.question, answer });
    expect(parseTravelRubric({ system: 'You grade one answer', user: m.user })).toBeNull();
    expect(travelVerdictKey('tcs', 'p', 'Fly  into BCN!')).toBe(travelVerdictKey('tcs', 'p', 'fly into bcn'));
    expect(travelVerdictKey('tcs', 'p', 'x')).not.toBe(travelVerdictKey('assertions', 'p', 'x'));
  });

  it('the software-sprint scenarios (ids sprint-...) get the sprint assertions rubric, read back alike; they have no TCS', () => {
    const sprint = { ...prompt, id: 'sprint-pantry' } as Prompt;
    expect(m(prompt).system).toBe(TRAVEL_ASSERTIONS_SYSTEM);
    expect(m(sprint).system).toBe(SPRINT_ASSERTIONS_SYSTEM);
    expect(parseTravelRubric(m(sprint))).toEqual({ kind: 'assertions', question: prompt.question, answer: 'web app' });
    const rows: TravelEventRow[] = [{ role: 'agent', sweep: 0, response: 'BCN', divergence: null }];
    expect(travelRunMeasures({ id: 'sprint-pantry', assertions: A }, rows, 0)).toMatchObject({
      hr: 0,
      tcs: null,
      tcs_note: 'the software-sprint replication is scored on HR only (the paper’s Table 4)',
    });
  });

  it('parses strictly: exactly the keys asked, each a listed verdict or a score in [0, 1] or null', () => {
    expect(parseAssertionReply('{"airport": "hallucinated", "weather": "not_addressed"}', A)).toEqual(['wrong', 'absent']);
    expect(parseAssertionReply('```json\n{"weather": "correct", "airport": "correct"}\n```', A)).toEqual(['right', 'right']);
    for (const bad of [
      '{"airport": "hallucinated"}',
      '{"airport": "correct", "weather": "correct", "budget": "correct"}',
      '{"airport": "wrong", "weather": "correct"}',
      'Verdict: {"airport": "correct", "weather": "correct"}',
      'Hard to say.',
      '',
    ])
      expect(parseAssertionReply(bad, A), bad).toBeNull();
    expect(parseTcsReply('{"date": 1, "location": 0, "budget": null, "schedule": 0.5, "recommendation": 1}')).toEqual([1, 0, null, 0.5, 1]);
    expect(parseTcsReply('{"date": 1, "location": 0, "budget": null, "schedule": 1.5, "recommendation": 1}')).toBeNull();
    expect(parseTcsReply('{"date": 1, "location": 0, "budget": null, "schedule": "1", "recommendation": 1}')).toBeNull();
    expect(parseTcsReply('{"date": 1, "location": 0}')).toBeNull();
    expect(parseAssertionReply(assertionReplyText(['right', 'both'], A), A)).toEqual(['right', 'absent']);
    expect(parseTcsReply(tcsReplyText([1, null, 0, 0.25, null]))).toEqual([1, null, 0, 0.25, null]);
  });

  it('judged HR and TCS by hand, judge failures left out and said in words', () => {
    const rows: TravelEventRow[] = ['BCN', 'LIS', 'garbled', 'BCN 22 C', 'garbled'].map((response, i) => ({
      role: 'agent',
      sweep: i < 3 ? 0 : 1,
      response,
      divergence: null,
    }));
    const verdicts: Record<string, ReturnType<typeof parseAssertionReply>> = {
      BCN: ['right', 'absent'],
      LIS: ['wrong', 'absent'],
      garbled: null,
      'BCN 22 C': ['right', 'right'],
    };
    const tcs: Record<string, (number | null)[] | null> = { 'BCN 22 C\n\ngarbled': [1, 1, 0.5, null, 0] };
    const m = travelRunMeasures({ assertions: A }, rows, 1, { verdicts: (a) => verdicts[a] ?? null, tcs: (a) => tcs[a] ?? null });
    // made: BCN 1, LIS 1, BCN 22 C 2 = 4; wrong: LIS = 1; two garbled answers excluded.
    expect(m).toMatchObject({ assertions_made: 4, assertions_wrong: 1, hr: 1 / 4, hr_note: '2 answers of 5 excluded (judge failure)' });
    // The final itinerary (sweep 1's two answers together) scored [1, 1, 0.5, null, 0]: TCS = (1 + 1 + 0.5 + 0) / 4.
    expect(m).toMatchObject({ tcs: 2.5 / 4, tcs_note: null, judge_failures: 2 });
    expect(m.tcs_dims).toEqual([1, 1, 0.5, null, 0]);
    const failed = travelRunMeasures({ assertions: A }, rows, 1, { verdicts: () => null, tcs: () => null });
    expect(failed).toMatchObject({
      hr: null,
      hr_note: 'the judge failed on every answer',
      tcs: null,
      tcs_note: 'the judge failed on the final itinerary',
      tcs_dims: [null, null, null, null, null],
      judge_failures: 6,
    });
    const silent = travelRunMeasures({ assertions: A }, rows, 1, {
      verdicts: () => ['absent', 'absent'],
      tcs: () => [null, null, null, null, null],
    });
    expect(silent).toMatchObject({ hr: null, hr_note: 'no answer states a checkable fact', tcs: null, judge_failures: 0 });
    expect(silent.tcs_note).toBe('the final itinerary says nothing on the five dimensions');
  });
});
