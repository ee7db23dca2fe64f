import { describe, expect, it } from 'vitest';
import { durableDue, type Waiting } from '../src/collector-durable.js';

const policy = { maxWaitMs: 60_000, partBytes: 4_000, budgetBytes: 10_000 };
const run = (waitingBytes: number, waitingSince: number | undefined): Waiting => ({ waitingBytes, waitingSince });

describe('durableDue', () => {
  it('leaves small, young runs waiting: a part per run at its close instead of one per tick', () => {
    const runs = new Map([
      ['a', run(100, 1_000)],
      ['b', run(3_999, 50_000)],
      ['c', run(0, undefined)],
    ]);
    expect(durableDue(runs, 60_999, policy)).toEqual([]);
  });

  it('makes durable a run whose results fill a part, and one whose oldest row has waited maxWaitMs', () => {
    const runs = new Map([
      ['young-small', run(100, 50_000)],
      ['full', run(4_000, 89_000)],
      ['old', run(10, 30_000)],
    ]);
    expect(durableDue(runs, 90_000, policy)).toEqual(['full', 'old']);
    expect(durableDue(runs, 89_999, policy)).toEqual(['full']);
  });

  it('over the budget, the largest runs go first until the rest is within it', () => {
    const runs = new Map([
      ['s1', run(2_000, 0)],
      ['l', run(3_900, 0)],
      ['m', run(3_000, 0)],
      ['s2', run(2_000, 0)],
    ]);
    // 10,900 waiting: the largest (3,900) brings it to 7,000, within the budget.
    expect(durableDue(runs, 1, policy)).toEqual(['l']);
    expect(durableDue(runs, 1, { ...policy, budgetBytes: 4_000 })).toEqual(['l', 'm']);
    expect(durableDue(runs, 1, { ...policy, budgetBytes: 3_999 })).toEqual(['l', 'm', 's1']);
    expect(durableDue(runs, 1, { ...policy, budgetBytes: 0 })).toEqual(['l', 'm', 's1', 's2']);
  });

  it('maxWaitMs 0 makes every waiting run due, whatever its size', () => {
    const runs = new Map([
      ['a', run(1, 5)],
      ['b', run(0, undefined)],
    ]);
    expect(durableDue(runs, 5, { ...policy, maxWaitMs: 0 })).toEqual(['a']);
  });
});
