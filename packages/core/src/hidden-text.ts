import type { RunPlan } from './plan.js';
import type { PopulationEntry } from './population.js';
import { personaText } from './protocol/prompts.js';
import { BRIEFING_LINE } from './briefing.js';

/**
 * Characters the longest hidden text of a population adds to a system prompt, computed once per population:
 * every run of a sweep shares its entries, and the checks run per run (and per k they try).
 */
const longest = new WeakMap<readonly PopulationEntry[], number>();
export function longestPersona(entries: readonly PopulationEntry[]): number {
  let chars = longest.get(entries);
  if (chars === undefined) {
    chars = 0;
    for (const e of entries) chars = Math.max(chars, personaText(e).length + 1);
    longest.set(entries, chars);
  }
  return chars;
}

/** Characters the longest of a prompt's briefings adds after a persona (briefing.ts). */
export function longestBriefing(briefings: Readonly<Record<string, string>> | undefined): number {
  let chars = 0;
  for (const b of Object.values(briefings ?? {})) chars = Math.max(chars, BRIEFING_LINE.length + b.length + 1);
  return chars;
}

/** Characters the longest persona of a run's population (with its briefing) adds to one member's prompt; 0 without one. */
export function hiddenChars(run: Pick<RunPlan, 'population' | 'prompt'>): number {
  return run.population ? longestPersona(run.population.entries) + longestBriefing(run.prompt.briefings) : 0;
}
