import { parseSsvpCall, splitAgentPrompt, type ChatMessages, type PromptContext } from '@panta/core';

/**
 * A ContextSummary or ContextMerge call read back from its text (serve-surrogate sees text only), with the
 * persona and hidden belief of the agent's system message; null for any other prompt.
 */
export function ssvpContext(messages: ChatMessages, temperature: number, templateSystems: readonly string[]): PromptContext | null {
  const call = parseSsvpCall(messages.user);
  if (!call) return null;
  let split: ReturnType<typeof splitAgentPrompt> = null;
  for (const system of templateSystems) if ((split = splitAgentPrompt(system, { system: messages.system, user: '' }))) break;
  const context: PromptContext = {
    kind: call.kind,
    question: call.question,
    sweep: -1,
    temperature,
    neighbourAgents: [],
    neighbourAnswers: [],
    context: call.items,
  };
  if (call.kind === 'context-merge') context.incoming = call.incoming;
  if (split?.persona) context.persona = split.persona;
  if (split?.belief !== undefined) context.belief = split.belief;
  return context;
}
