import type { OrderParamRow } from '@panta/corpus';
import type { CorpusData } from './corpus-data.js';

/**
 * Each complete run's order-parameter rows in sweep order, of the first encoder: the tag counts and ρ they
 * carry come from the judge and are the same under every encoder.
 */
export function runSeries(data: CorpusData): Map<string, OrderParamRow[]> {
  const encoder = data.encoders[0];
  const out = new Map<string, OrderParamRow[]>();
  for (const p of data.orderParams) {
    if (p.encoder !== encoder) continue;
    const rows = out.get(p.run_id);
    if (rows) rows.push(p);
    else out.set(p.run_id, [p]);
  }
  for (const rows of out.values()) rows.sort((a, b) => a.sweep - b.sweep);
  return out;
}

/** Answers in a snapshot: every tag, not-known answers and judge failures included. */
export function answers(p: OrderParamRow): number {
  return p.n_correct + p.n_hallucinated + p.n_not_known + p.n_judge_failure;
}

/** A snapshot's majority over correct against hallucinated answers (not-known answers and judge failures take no side). */
export type Majority = 'correct' | 'hallucinated' | 'tie' | 'none';

export function majority(p: OrderParamRow): Majority {
  if (p.n_correct === 0 && p.n_hallucinated === 0) return 'none';
  if (p.n_correct > p.n_hallucinated) return 'correct';
  if (p.n_hallucinated > p.n_correct) return 'hallucinated';
  return 'tie';
}
