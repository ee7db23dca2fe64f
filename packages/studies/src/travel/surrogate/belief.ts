import { briefingsOf, type PromptContext } from '@panta/core';
import type { AgentView } from '@panta/llm';

/**
 * Added to the correct option's field on travel prompts (prompts with assertions): their task names the
 * destination, so a role that no briefing misleads names its airport (0.35 + 1.15 = 1.5 with the default
 * field), as a model told "plan a trip to Barcelona" names BCN. In process and served alike, with no parameter.
 */
export const TASK_NAMES_ANSWER = 1.15;

/**
 * What a briefed role leans to (the travel experiment): a briefing that names an answer option of the
 * prompt (the Booking agent's wrong airport code), its own or one broadcast to it by a teammate, acts on the
 * surrogate as a hidden belief does, as a model takes tool output it reads for fact; one that names none (a
 * month's weather, a truncated schedule) leaves the agent as it is. A hidden belief of the population entry
 * itself comes first.
 */
export function briefedBelief(agent: AgentView, context: PromptContext): string | undefined {
  if (context.belief !== undefined) return context.belief;
  return briefingsOf(context.persona).find((b) => agent.optionOf(b) !== agent.notKnownOption);
}
