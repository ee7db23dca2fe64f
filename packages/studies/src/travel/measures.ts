import { normaliseText, type Prompt } from '@panta/core';

/**
 * The travel experiment's measures (Hallucination as Context Drift, section 4.4), as pure functions of a
 * run's rows. Every one is defined on every run a model can produce: where a measure has no value (no
 * assertion made, no contradiction named, nothing to recover) it is null with the reason in words.
 */

export type Assertions = NonNullable<Prompt['assertions']>;

/** What one text says about one checkable fact: the gold value, the injected one, both, or neither. */
export type AssertionVerdict = 'right' | 'wrong' | 'both' | 'absent';

function has(hay: string, phrases: readonly string[]): boolean {
  return phrases.some((p) => hay.includes(` ${normaliseText(p)} `));
}

/**
 * Per assertion, what the text states, by whole-word phrase matching after the reference judge's
 * normalisation: `right` names a gold phrase only, `wrong` an injected phrase only, `both` names both (a
 * merge naming the contradiction, or an answer that hedges), `absent` neither.
 */
export function assertionVerdicts(text: string, assertions: Assertions): AssertionVerdict[] {
  const hay = ` ${normaliseText(text)} `;
  return assertions.map((a) => {
    const right = has(hay, a.gold);
    const wrong = has(hay, a.wrong);
    return right && wrong ? 'both' : right ? 'right' : wrong ? 'wrong' : 'absent';
  });
}

/** Counts of assertions made by a set of texts (the paper's HR is wrong over made). */
export interface AssertionCounts {
  /** Assertions that state the fact one way (right or wrong; `both` and `absent` state nothing checkable). */
  made: number;
  wrong: number;
}

export function countAssertions(texts: readonly string[], assertions: Assertions): AssertionCounts {
  let made = 0;
  let wrong = 0;
  for (const t of texts)
    for (const v of assertionVerdicts(t, assertions)) {
      if (v === 'right' || v === 'wrong') made++;
      if (v === 'wrong') wrong++;
    }
  return { made, wrong };
}

/** HR per assertion: wrong over made; null (with why) when the texts make no checkable assertion. */
export function hallucinationRate(counts: AssertionCounts): { value: number | null; note: string | null } {
  if (counts.made === 0) return { value: null, note: 'no answer states a checkable fact' };
  return { value: counts.wrong / counts.made, note: null };
}

/**
 * Conflict-detection latency: the first step at which a merge names the contradiction, that is states both
 * the gold and the injected value of some assertion (the paper's "Booking: LIS vs. Planner: BCN"). Null
 * when no merge does (no-sync and full-broadcast make no merge at all).
 */
export function detectionStep(merges: readonly { step: number; text: string }[], assertions: Assertions): number | null {
  let first: number | null = null;
  for (const m of merges) if (assertionVerdicts(m.text, assertions).includes('both') && (first === null || m.step < first)) first = m.step;
  return first;
}

/**
 * Recovery steps (the paper: "the number of additional agent exchanges required after a contradiction is
 * detected"): from the detection step to the first step, at or after it, at which no answer states an
 * injected value. `wrongAt[s]` is true when some answer of step s does. Null when nothing was detected, or
 * when the team never recovers within the run.
 */
export function recoverySteps(wrongAt: readonly boolean[], detected: number | null): { value: number | null; note: string | null } {
  if (detected === null) return { value: null, note: 'no contradiction detected' };
  for (let s = detected; s < wrongAt.length; s++) if (!wrongAt[s]) return { value: s - detected, note: null };
  return { value: null, note: 'not recovered within the run' };
}

/** The study's domains: the travel task (section 4) and the software-sprint replication (5.8), told apart by the scenario's id. */
export type TravelDomain = 'travel' | 'sprint';

export function travelDomain(prompt: { id?: string }): TravelDomain {
  return prompt.id?.startsWith('sprint-') ? 'sprint' : 'travel';
}

/** Whether a domain's runs have a TCS: the paper scores the final itinerary in travel, and reports HR only for the sprint (Table 4). */
export function hasTcs(prompt: { id?: string }): boolean {
  return travelDomain(prompt) === 'travel';
}
