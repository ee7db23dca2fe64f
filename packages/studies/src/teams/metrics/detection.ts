/**
 * DRIFTJudge detection measured against gold-based drift ("Stay Focused", RQ5): one item per judged turn,
 * `flagged` the judge's verdict (null when the verdict could not be read: a judge failure counts as a wrong
 * verdict, a miss on a drifting turn and a false alarm on a steady one) and `drifting` the truth from
 * teamDrift's per-turn `drifting`.
 */
export interface JudgedTurn {
  flagged: boolean | null;
  drifting: boolean;
}

/** A ratio with its numerator and denominator; `value` is null, with `undefined_because`, when the denominator is 0. */
export interface Rate {
  value: number | null;
  numerator: number;
  denominator: number;
  undefined_because: string | null;
}

export interface Detection {
  tp: number;
  fp: number;
  tn: number;
  fn: number;
  /** Judge failures among the items (already counted in fp or fn). */
  failures: number;
  precision: Rate;
  recall: Rate;
  specificity: Rate;
  accuracy: Rate;
}

function rate(numerator: number, denominator: number, emptyReason: string): Rate {
  return denominator === 0
    ? { value: null, numerator, denominator, undefined_because: emptyReason }
    : { value: numerator / denominator, numerator, denominator, undefined_because: null };
}

export function detection(items: readonly JudgedTurn[]): Detection {
  let tp = 0;
  let fp = 0;
  let tn = 0;
  let fn = 0;
  let failures = 0;
  for (const { flagged, drifting } of items) {
    if (flagged === null) failures++;
    // A failed verdict is wrong whatever the truth: the opposite of it.
    const said = flagged ?? !drifting;
    if (drifting) said ? tp++ : fn++;
    else said ? fp++ : tn++;
  }
  return {
    tp,
    fp,
    tn,
    fn,
    failures,
    precision: rate(tp, tp + fp, 'the judge flagged no turn'),
    recall: rate(tp, tp + fn, 'no turn drifted'),
    specificity: rate(tn, tn + fp, 'every turn drifted'),
    accuracy: rate(tp + tn, items.length, 'no turn was judged'),
  };
}
