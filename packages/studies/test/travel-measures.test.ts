import { describe, expect, it } from 'vitest';
import { briefingsOf, withBriefing, withBroadcast } from '@panta/core';
import {
  assertionVerdicts,
  type Assertions,
  countAssertions,
  detectionStep,
  hallucinationRate,
  recoverySteps,
} from '../src/travel/measures.js';
import { finalItinerary, paperCalls, referenceTcs, type TravelEventRow, travelRunMeasures } from '../src/travel/run-measures.js';

// Barcelona: gold BCN / 22 C / 5 days; injected LIS (Booking), 14 C (Advisor), 3 days (Planner).
const A: Assertions = [
  { name: 'airport', gold: ['BCN', 'El Prat'], wrong: ['LIS', 'Lisbon'] },
  { name: 'weather', gold: ['22 C'], wrong: ['14 C'] },
  { name: 'schedule', gold: ['5 days', 'day 5'], wrong: ['3 days'] },
];

describe('travel measures (Hallucination as Context Drift 4.4), by hand', () => {
  it('reads each assertion of a text as right, wrong, both or absent (whole words, the reference judge normalisation)', () => {
    expect(assertionVerdicts('Fly into BCN; expect highs of 14 C over the 5 days.', A)).toEqual(['right', 'wrong', 'right']);
    expect(assertionVerdicts('Booking says LIS, the task says BCN.', A)).toEqual(['both', 'absent', 'absent']);
    // "LISBON" is a word of its own, "BCNX" is not BCN.
    expect(assertionVerdicts('lisbon! BCNX 3 DAYS', A)).toEqual(['wrong', 'absent', 'wrong']);
    expect(assertionVerdicts('', A)).toEqual(['absent', 'absent', 'absent']);
  });

  it('HR per assertion is wrong over made; a population that states nothing has none', () => {
    // right+wrong+right, wrong, both (not made), absent x3 -> made 4, wrong 2
    const counts = countAssertions(['Fly into BCN; highs of 14 C over the 5 days.', 'Arrive LIS.', 'LIS or BCN?', 'no idea'], A);
    expect(counts).toEqual({ made: 4, wrong: 2 });
    expect(hallucinationRate(counts)).toEqual({ value: 0.5, note: null });
    expect(hallucinationRate(countAssertions(['no idea', ''], A))).toEqual({ value: null, note: 'no answer states a checkable fact' });
    expect(hallucinationRate(countAssertions([], A)).value).toBeNull();
  });

  it('detection is the first step at which a merge names both values; recovery counts steps from it', () => {
    const merges = [
      { step: 3, text: 'Contradiction: LIS against BCN.' },
      { step: 1, text: 'No direct contradiction: we both hold BCN.' },
      { step: 2, text: 'Contradiction with agent 1: it holds "LIS", I hold "El Prat". More likely authoritative: El Prat.' },
    ];
    expect(detectionStep(merges, A)).toBe(2);
    expect(detectionStep([], A)).toBeNull();
    expect(detectionStep([merges[1]], A)).toBeNull();
    // wrong at steps 0..2, right from 3: detected at 2 -> 1 step; at 3 -> 0.
    const wrongAt = [true, true, true, false, false];
    expect(recoverySteps(wrongAt, 2)).toEqual({ value: 1, note: null });
    expect(recoverySteps(wrongAt, 3)).toEqual({ value: 0, note: null });
    expect(recoverySteps(wrongAt, null)).toEqual({ value: null, note: 'no contradiction detected' });
    expect(recoverySteps([true, true, true], 1)).toEqual({ value: null, note: 'not recovered within the run' });
  });

  it('reference TCS scores the final itinerary (the final answers together, the paper’s TCS), not the mean over the answers', () => {
    // The itinerary states BCN and LIS (Barcelona days, Lisbon flights): location 0.5; 22 C only: recommendation 1;
    // 3 days only: schedule 0. TCS = (0.5 + 0 + 1) / 3 = 0.5 (the mean over the three answers would give (2/3 + 0 + 1) / 3).
    const finals = ['Fly into BCN; highs around 22 C.', 'BCN it is, a 3 days plan.', 'Arrive LIS.'];
    expect(finalItinerary(finals)).toBe('Fly into BCN; highs around 22 C.\n\nBCN it is, a 3 days plan.\n\nArrive LIS.');
    expect(referenceTcs(finalItinerary(finals), A)).toEqual({ value: 0.5, note: null, dims: [null, 0.5, null, 0, 1] });
    expect(referenceTcs(finalItinerary(['BCN', 'El Prat, 5 days']), A)).toEqual({ value: 1, note: null, dims: [null, 1, null, 1, null] });
    expect(referenceTcs('nothing checkable', A)).toEqual({
      value: null,
      note: 'the final itinerary states no checkable fact',
      dims: [null, null, null, null, null],
    });
  });

  it('calls as the paper counts them: task messages, plus ssvp’s summaries and merges or full-broadcast’s broadcasts; none for no-sync', () => {
    // 3 agents x 6 steps (sweeps 0..5), a summary per answer, 4 merges: the paper's no-sync counts 18.
    const rows: TravelEventRow[] = [];
    for (let sweep = 0; sweep <= 5; sweep++)
      for (let a = 0; a < 3; a++) {
        rows.push({ role: 'summary', sweep, response: 's', divergence: null });
        rows.push({ role: 'agent', sweep, response: 'BCN', divergence: null });
      }
    const merges = [1, 1, 3, 3].map((sweep) => ({ role: 'merge', sweep, response: 'm', divergence: 0.3 }));
    expect(paperCalls(rows, { protocol: 'no-sync', n: 3 })).toEqual({ task_calls: 18, sync_calls: 0 });
    expect(paperCalls([...rows, ...merges], { protocol: 'ssvp', n: 3 })).toEqual({ task_calls: 18, sync_calls: 18 + 4 });
    // full-broadcast: each of 3 agents sends its context to 2 teammates at each of the 5 exchanges.
    expect(paperCalls(rows, { protocol: 'full-broadcast', n: 3 })).toEqual({ task_calls: 18, sync_calls: 3 * 2 * 5 });
  });

  it("one run's row: HR over every answer, TCS of the last step, detection, recovery, calls, CDS_sys per step", () => {
    const rows: TravelEventRow[] = [
      { role: 'summary', sweep: 0, response: 's', divergence: null },
      { role: 'agent', sweep: 0, response: 'BCN', divergence: null },
      { role: 'agent', sweep: 0, response: 'LIS', divergence: null },
      { role: 'summary', sweep: 1, response: 's', divergence: null },
      { role: 'merge', sweep: 1, response: 'Contradiction: it holds "LIS", I hold "BCN".', divergence: 0.4 },
      { role: 'agent', sweep: 1, response: 'BCN', divergence: 0.4 },
      { role: 'agent', sweep: 1, response: 'LIS', divergence: 0.2 },
      { role: 'agent', sweep: 2, response: 'BCN', divergence: 0 },
      { role: 'agent', sweep: 2, response: 'El Prat', divergence: 0 },
    ];
    const m = travelRunMeasures({ assertions: A }, rows, 2);
    expect(m).toEqual({
      assertions_made: 6,
      assertions_wrong: 2,
      hr: 2 / 6,
      hr_note: null,
      tcs: 1,
      tcs_note: null,
      tcs_dims: [null, 1, null, null, null],
      judge_failures: 0,
      detection_step: 1,
      detection_note: null,
      recovery_steps: 1,
      recovery_note: null,
      calls: 9,
      task_calls: 6,
      sync_calls: 3,
      cds_sys: [0.30000000000000004, 0],
    });
    const none = travelRunMeasures({ assertions: A }, [], 2);
    expect(none).toMatchObject({
      hr: null,
      tcs: null,
      tcs_note: 'the run has no answer',
      detection_step: null,
      calls: 0,
      cds_sys: [null, null],
    });
    expect(none.detection_note).toBe('no merge (the arm makes none, or no pair passed tau)');
  });

  it('a briefing joins the persona of its entry only; full-broadcast adds the teammates’ and the surrogate reads them back', () => {
    const prompt = { briefings: { booking: 'arrive LIS\n(Lisbon)', advisor: 'January: 14 C' } };
    expect(withBriefing('You are Booking.', prompt, 'booking')).toBe('You are Booking.\nYour briefing for this task: arrive LIS (Lisbon)');
    expect(withBriefing('You are the Planner.', prompt, 'planner')).toBe('You are the Planner.');
    expect(withBriefing('P', {}, 'booking')).toBe('P');
    const text = withBroadcast('You are the Planner.', prompt, [
      { agent: 1, entryId: 'booking' },
      { agent: 2, entryId: 'advisor' },
    ]);
    expect(text).toBe(
      'You are the Planner.\nBroadcast context from agent 1: arrive LIS (Lisbon)\nBroadcast context from agent 2: January: 14 C',
    );
    expect(briefingsOf(`${withBriefing('B', prompt, 'booking')}\nBroadcast context from agent 2: January: 14 C`)).toEqual([
      'arrive LIS (Lisbon)',
      'January: 14 C',
    ]);
    expect(briefingsOf(undefined)).toEqual([]);
  });
});
