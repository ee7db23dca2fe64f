import { type ChatMessages, classifyAnswer, type Prompt, parseRubric, RUBRIC_SYSTEM } from '@panta/core';
import { isTravelRubric, travelJudgeReply } from './travel-judge.js';

/**
 * The in-process surrogate's reply to a judge's rubric, as `panta serve-surrogate` gives it (server/
 * responder.ts): the factual rubric graded by the reference check, `{"tag": ...}`, and the travel rubrics
 * (travel-judge.ts). Null when the messages are no rubric; throws on a rubric it cannot read.
 */
export function surrogateJudgeReply(messages: ChatMessages, promptOf: (question: string) => Prompt | undefined): string | null {
  if (isTravelRubric(messages)) return travelJudgeReply(messages, promptOf);
  if (messages.system !== RUBRIC_SYSTEM) return null;
  const parsed = parseRubric(messages.user);
  const prompt = parsed && promptOf(parsed.question);
  if (!parsed || !prompt) throw new Error('surrogate: a rubric the surrogate judge cannot read, or about an unknown question');
  const c = classifyAnswer(prompt, parsed.response);
  return JSON.stringify({ tag: c.kind === 'correct' ? 'correct' : c.kind === 'false' ? 'hallucinated' : 'not_known' });
}
