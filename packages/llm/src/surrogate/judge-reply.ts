import { type ChatMessages, classifyAnswer, type Prompt, parseRubric, RUBRIC_SYSTEM } from '@panta/core';
import type { ScenarioModel } from './scenario.js';

/**
 * The surrogate's reply to a judge's rubric, in process as in `panta serve-surrogate` (server/responder.ts):
 * a scenario's own rubric as the scenario grades it, else the factual rubric graded by the reference check,
 * `{"tag": ...}`. Null when the messages are no rubric; throws on a rubric it cannot read.
 */
export function surrogateJudgeReply(
  messages: ChatMessages,
  promptOf: (question: string) => Prompt | undefined,
  scenarios: readonly ScenarioModel[],
): string | null {
  for (const s of scenarios) {
    const text = s.judge?.(messages, promptOf) ?? null;
    if (text !== null) return text;
  }
  if (messages.system !== RUBRIC_SYSTEM) return null;
  const parsed = parseRubric(messages.user);
  const prompt = parsed && promptOf(parsed.question);
  if (!parsed || !prompt) throw new Error('surrogate: a rubric the surrogate judge cannot read, or about an unknown question');
  const c = classifyAnswer(prompt, parsed.response);
  return JSON.stringify({ tag: c.kind === 'correct' ? 'correct' : c.kind === 'false' ? 'hallucinated' : 'not_known' });
}
