/**
 * Agreement between two raters who labelled the same items: the share of items they label alike, and
 * Cohen's kappa, which discounts the agreement two raters with their label frequencies would reach by chance.
 */

/** Agreement of two raters over the items both labelled. */
export interface Agreement {
  /** Items both raters labelled. */
  n: number;
  /** Observed agreement p_o: the share of items labelled alike; null when n = 0. */
  agreement: number | null;
  /** Chance agreement p_e = sum over labels of (share of rater A) * (share of rater B); null when n = 0. */
  chance: number | null;
  /**
   * Cohen's kappa = (p_o - p_e) / (1 - p_e); null when undefined: no item, or p_e = 1 (both raters gave
   * every item one and the same label, so chance explains all agreement and kappa is 0/0).
   */
  kappa: number | null;
  /** Why kappa is null, in words a report can print; null when kappa is defined. */
  undefinedBecause: string | null;
}

/** Observed agreement and Cohen's kappa of two label sequences of equal length (item i is a[i] and b[i]). */
export function cohenKappa(a: readonly string[], b: readonly string[]): Agreement {
  if (a.length !== b.length) throw new Error(`cohenKappa: ${a.length} labels against ${b.length}`);
  const n = a.length;
  if (n === 0) return { n, agreement: null, chance: null, kappa: null, undefinedBecause: 'no item labelled by both' };
  const countA = new Map<string, number>();
  const countB = new Map<string, number>();
  let same = 0;
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) same++;
    countA.set(a[i], (countA.get(a[i]) ?? 0) + 1);
    countB.set(b[i], (countB.get(b[i]) ?? 0) + 1);
  }
  const po = same / n;
  let pe = 0;
  for (const [label, ca] of countA) pe += (ca / n) * ((countB.get(label) ?? 0) / n);
  // p_e is a sum of products of shares: exactly 1 only when both raters used one single label, the same one.
  if (pe >= 1) return { n, agreement: po, chance: 1, kappa: null, undefinedBecause: 'both raters gave every item the same single label' };
  return { n, agreement: po, chance: pe, kappa: (po - pe) / (1 - pe), undefinedBecause: null };
}
