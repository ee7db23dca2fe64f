import { classifyAnswer, normaliseText } from '../answers.js';
import type { Prompt } from '../dataset.js';
import type { Tag } from '../event.js';
import { ifevalStrict } from './ifeval.js';

/** A team answer scored against gold: both in [0, 1]. */
export interface TeamScore {
  /**
   * Exact match: for a prompt with gold `facts`, every fact is in the answer (FanOutQA's strict accuracy);
   * otherwise the answer names an accepted answer and no known false one (for `choices`, exactly the gold
   * option), i.e. the reference judge's `correct`. 1 or 0.
   */
  exact_match: number;
  /**
   * Fact recall: the share of gold `facts` found in the answer (FanOutQA's loose accuracy). A prompt without
   * `facts` has one fact, its answer, so fact recall equals exact match there.
   */
  fact_recall: number;
}

/**
 * Whether each gold fact occurs in the text as whole words, after the normalisation the reference judge uses
 * (case, punctuation, digit grouping; FanOutQA also lemmatises, which Panta does not: "moons" does not match
 * a fact "moon").
 */
export function factsFound(facts: readonly string[], text: string): boolean[] {
  const hay = ` ${normaliseText(text)} `;
  return facts.map((f) => {
    const needle = normaliseText(f);
    return needle !== '' && hay.includes(` ${needle} `);
  });
}

/**
 * The gold verdict on a debate turn (arm drift-policy-gold, in place of DRIFTJudge's call): DRIFT when the turn's
 * solution scores below the previous turn's (fact recall against the prompt's gold; a negative FOCUS), else NO DRIFT.
 */
export function goldDriftVerdict(prompt: Prompt, before: string, after: string): string {
  const was = scoreAnswer(prompt, before).fact_recall;
  const is = scoreAnswer(prompt, after).fact_recall;
  const scores = `gold fact recall ${was.toFixed(2)} -> ${is.toFixed(2)}`;
  return is < was ? `DRIFT: the solution got worse against the gold (${scores}).` : `NO DRIFT: ${scores}.`;
}

/** The gold verdict of a drift-judge event from its kept reads (the previous turn's draft, this turn's solution). */
export function goldVerdictOf(prompt: Prompt, kept: readonly { read: { kind: string }; text: string }[]): string {
  const of = (kind: string) => kept.find((k) => k.read.kind === kind)?.text ?? '';
  return goldDriftVerdict(prompt, of('draft'), of('solution'));
}

/**
 * Scores a team's answer (a relay's last note, a hub's aggregation, a debate turn's voted solution). On a
 * prompt with IFEval `instructions` both scores are IFEval's strict accuracy of the answer (1 or 0).
 * `tag` is the corpus judge's verdict on that answer when there is one: `not_known` and `judge_failure`
 * count as wrong (score 0), as in "Stay Focused"; a missing answer (null) scores 0 too.
 */
export function scoreAnswer(prompt: Prompt, text: string | null, tag?: Tag | null): TeamScore {
  if (prompt.instructions) {
    // IFEval's strict accuracy: the instructions followed or not, whatever a phrase judge tagged.
    const s = text === null ? 0 : ifevalStrict(text, prompt.instructions);
    return { exact_match: s, fact_recall: s };
  }
  if (text === null || tag === 'not_known' || tag === 'judge_failure') return { exact_match: 0, fact_recall: 0 };
  if (prompt.facts && prompt.facts.length > 0) {
    const found = factsFound(prompt.facts, text);
    const hits = found.filter(Boolean).length;
    return { exact_match: hits === found.length ? 1 : 0, fact_recall: hits / found.length };
  }
  const correct = tag != null ? tag === 'correct' : classifyAnswer(prompt, text).kind === 'correct';
  const s = correct ? 1 : 0;
  return { exact_match: s, fact_recall: s };
}
