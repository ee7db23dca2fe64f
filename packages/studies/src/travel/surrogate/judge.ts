import type { ChatMessages, Prompt } from '@panta/core';
import { assertionVerdicts } from '../measures.js';
import {
  assertionReplyText,
  parseTravelRubric,
  SPRINT_ASSERTIONS_SYSTEM,
  TRAVEL_ASSERTIONS_SYSTEM,
  TRAVEL_TCS_SYSTEM,
  tcsReplyText,
} from '../rubric.js';
import { TCS_DIMENSIONS } from '../run-measures.js';

/** Whether the messages are one of the travel rubrics (../rubric.ts). */
export function isTravelRubric(messages: ChatMessages): boolean {
  return (
    messages.system === TRAVEL_ASSERTIONS_SYSTEM || messages.system === SPRINT_ASSERTIONS_SYSTEM || messages.system === TRAVEL_TCS_SYSTEM
  );
}

const SCORE = { right: 1, wrong: 0, both: 0.5, absent: null } as const;

/**
 * The surrogate judge's reply to a travel rubric, in process as in `panta serve-surrogate`: the reference
 * check's verdicts in the rubric's JSON, so the LLM path reproduces the reference HR exactly. TCS, which the
 * reference check scores on three dimensions only, is scored on all five: a dimension with its own assertion
 * stated is scored on it (right 1, wrong 0, both 0.5), any other on the destination airport, the paper's
 * cascade (a plan for the wrong city has the wrong dates' logistics, budget and advice too); null when the
 * answer states neither. Throws when the rubric cannot be read or names an unknown task.
 */
export function travelJudgeReply(messages: ChatMessages, promptOf: (question: string) => Prompt | undefined): string {
  const parsed = parseTravelRubric(messages);
  const prompt = parsed ? promptOf(parsed.question) : undefined;
  if (!parsed || !prompt?.assertions) throw new Error('a travel rubric the surrogate judge cannot read, or about an unknown task');
  const assertions = prompt.assertions;
  const verdicts = assertionVerdicts(parsed.answer, assertions);
  if (parsed.kind === 'assertions') return assertionReplyText(verdicts, assertions);
  const airport = assertions.findIndex((a) => a.name === 'airport');
  const scores = TCS_DIMENSIONS.map((d) => {
    const own = d.assertion === null ? -1 : assertions.findIndex((a) => a.name === d.assertion);
    const at = own >= 0 && verdicts[own] !== 'absent' ? own : airport;
    return at < 0 ? null : SCORE[verdicts[at]];
  });
  return tcsReplyText(scores);
}
