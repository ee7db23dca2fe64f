import { describe, expect, it } from 'vitest';
import { costPerArm } from '../src/teams/metrics/cost.js';
import { detection } from '../src/teams/metrics/detection.js';

describe('DRIFTJudge detection', () => {
  it('counts a confusion table by hand; a judge failure is the wrong verdict', () => {
    const d = detection([
      { flagged: true, drifting: true }, // tp
      { flagged: true, drifting: false }, // fp
      { flagged: false, drifting: false }, // tn
      { flagged: false, drifting: false }, // tn
      { flagged: false, drifting: true }, // fn
      { flagged: null, drifting: true }, // failure -> fn
      { flagged: null, drifting: false }, // failure -> fp
    ]);
    expect([d.tp, d.fp, d.tn, d.fn, d.failures]).toEqual([1, 2, 2, 2, 2]);
    expect(d.precision.value).toBeCloseTo(1 / 3, 12);
    expect(d.recall.value).toBeCloseTo(1 / 3, 12);
    expect(d.specificity.value).toBeCloseTo(2 / 4, 12);
    expect(d.accuracy.value).toBeCloseTo(3 / 7, 12);
  });

  it('says why a rate is undefined instead of NaN', () => {
    const none = detection([{ flagged: false, drifting: false }]);
    expect(none.precision).toEqual({ value: null, numerator: 0, denominator: 0, undefined_because: 'the judge flagged no turn' });
    expect(none.recall.undefined_because).toBe('no turn drifted');
    expect(none.specificity.value).toBe(1);
    const empty = detection([]);
    expect(empty.accuracy.value).toBeNull();
    expect(Object.values(empty).some((v) => typeof v === 'number' && Number.isNaN(v))).toBe(false);
  });
});

describe('calls and tokens per arm', () => {
  it('sums calls and tokens and divides by the runs of each arm', () => {
    const c = costPerArm([
      { arm: 'none', run_id: 'a', prompt_tokens: 10, completion_tokens: 5 },
      { arm: 'none', run_id: 'a', prompt_tokens: 10, completion_tokens: 5 },
      { arm: 'none', run_id: 'b', prompt_tokens: 20, completion_tokens: 0 },
      { arm: 'drift-policy', run_id: 'c', prompt_tokens: 7, completion_tokens: 3 },
    ]);
    expect(c).toEqual([
      { arm: 'none', runs: 2, calls: 3, prompt_tokens: 40, completion_tokens: 10, calls_per_run: 1.5, tokens_per_run: 25 },
      { arm: 'drift-policy', runs: 1, calls: 1, prompt_tokens: 7, completion_tokens: 3, calls_per_run: 1, tokens_per_run: 10 },
    ]);
  });
});
