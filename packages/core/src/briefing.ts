import type { Prompt } from './dataset.js';

/**
 * A role's injected context (a prompt's `briefings`: what a tool told one role, right or wrong). It depends
 * on the scenario (the prompt) and on the role (the population entry), so the prompt carries one briefing per
 * entry id and the agent holding that entry reads it in its system message, after its persona.
 */
export const BRIEFING_LINE = 'Your briefing for this task: ';

/** The persona text with the prompt's briefing for this entry, when the prompt has one. */
export function withBriefing(personaText: string, prompt: Pick<Prompt, 'briefings'>, entryId: string): string {
  const briefing = prompt.briefings?.[entryId];
  return briefing === undefined ? personaText : `${personaText}\n${BRIEFING_LINE}${briefing.replace(/\s+/g, ' ').trim()}`;
}

/** Opens each teammate's briefing that full-broadcast shares. */
export const BROADCAST_LINE = 'Broadcast context from agent ';

/**
 * full-broadcast on briefed prompts: the paper's agents "broadcast their complete context at every reasoning
 * step", and a role's complete context includes what it was briefed with, so from the first exchange on
 * every agent also reads each teammate's briefing (the channel through which the Booking agent's wrong
 * destination contaminates the team). Prompts without briefings are untouched.
 */
export function withBroadcast(
  personaText: string,
  prompt: Pick<Prompt, 'briefings'>,
  teammates: readonly { agent: number; entryId: string }[],
): string {
  const lines: string[] = [];
  for (const t of teammates) {
    const briefing = prompt.briefings?.[t.entryId];
    if (briefing !== undefined) lines.push(`${BROADCAST_LINE}${t.agent}: ${briefing.replace(/\s+/g, ' ').trim()}`);
  }
  return lines.length === 0 ? personaText : `${personaText}\n${lines.join('\n')}`;
}

/** Every briefing a persona text holds (its own, then those broadcast to it), read back from the text. */
export function briefingsOf(text: string | undefined): string[] {
  if (!text) return [];
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(BRIEFING_LINE)) out.push(line.slice(BRIEFING_LINE.length));
    else if (line.startsWith(BROADCAST_LINE)) out.push(line.slice(line.indexOf(': ') + 2));
  }
  return out;
}
