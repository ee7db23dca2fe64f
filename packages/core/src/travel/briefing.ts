import type { Prompt } from '../dataset.js';

/**
 * A role's injected context (Hallucination as Context Drift, section 4.1: the Advisor's wrong month's
 * weather, the Booking agent's wrong airport codes, the Planner's truncated schedule). It depends on the
 * scenario (the prompt) and on the role (the population entry), so the prompt carries one briefing per entry
 * id and the agent holding that entry reads it in its system message, after its persona.
 */
export const BRIEFING_LINE = 'Your briefing for this task: ';

/** The persona text with the prompt's briefing for this entry, when the prompt has one. */
export function withBriefing(personaText: string, prompt: Pick<Prompt, 'briefings'>, entryId: string): string {
  const briefing = prompt.briefings?.[entryId];
  return briefing === undefined ? personaText : `${personaText}\n${BRIEFING_LINE}${briefing.replace(/\s+/g, ' ').trim()}`;
}

/** The briefing read back from a system message or persona text (a served model sees text only). */
export function briefingOf(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const at = text.lastIndexOf(`\n${BRIEFING_LINE}`);
  const start = at >= 0 ? at + 1 : text.startsWith(BRIEFING_LINE) ? 0 : -1;
  if (start < 0) return undefined;
  return text.slice(start + BRIEFING_LINE.length).split('\n')[0];
}
