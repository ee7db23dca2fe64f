import { focusSeries } from '../measure/order-params.js';

/**
 * Problem drift of one debate ("Stay Focused", section 3), from the score of each turn's voted solution
 * against gold, turns in order (index 0 = the first turn). Drift compares a turn with the best of all
 * earlier turns, with no tolerance: a debate's scores are exact, not estimates over a population.
 */
export interface TeamDrift {
  /** FOCUS(t) = score(t) - score(t-1) for t >= 1 (index t - 1), null where either score is missing. */
  focus: (number | null)[];
  /** Sum of the defined FOCUS values; null when there are none (a single turn). */
  focus_total: number | null;
  /**
   * Index of the first turn of the first run of 2 or more consecutive turns each scoring below the best
   * earlier turn; null when the debate never drifts.
   */
  drift_onset: number | null;
  /** After a drift, some later turn is back at or above the best score before the onset; null without drift. */
  recovered: boolean | null;
  /** Per turn: true when the turn lies in a run of 2 or more consecutive turns below the best earlier turn. */
  drifting: boolean[];
}

export function teamDrift(scores: readonly (number | null)[]): TeamDrift {
  const focus = focusSeries(scores);
  let focusTotal: number | null = null;
  for (const f of focus) if (f !== null) focusTotal = (focusTotal ?? 0) + f;
  const below: boolean[] = [];
  let best = Number.NEGATIVE_INFINITY;
  const bestBefore: number[] = [];
  for (const s of scores) {
    bestBefore.push(best);
    below.push(s != null && s < best);
    if (s != null) best = Math.max(best, s);
  }
  const drifting = below.map(() => false);
  let onset: number | null = null;
  for (let t = 0; t < below.length; ) {
    if (!below[t]) {
      t++;
      continue;
    }
    let end = t;
    while (end + 1 < below.length && below[end + 1]) end++;
    if (end > t) {
      for (let u = t; u <= end; u++) drifting[u] = true;
      onset ??= t;
    }
    t = end + 1;
  }
  if (onset === null) return { focus, focus_total: focusTotal, drift_onset: null, recovered: null, drifting };
  const level = bestBefore[onset];
  const recovered = scores.slice(onset + 2).some((s) => s != null && s >= level);
  return { focus, focus_total: focusTotal, drift_onset: onset, recovered, drifting };
}
