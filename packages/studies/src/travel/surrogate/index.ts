import type { ScenarioModel } from '@panta/llm';
import { briefedBelief, TASK_NAMES_ANSWER } from './belief.js';
import { travelJudgeReply, isTravelRubric } from './judge.js';
import { travelMergeReply, travelReads, travelSummaryReply } from './reply.js';

/**
 * The travel experiment (Hallucination as Context Drift, section 4): on its prompts (those with assertions)
 * the task names the destination, a role's briefing acts as a hidden belief, ssvp's summaries and merges
 * speak of the destination airport, and the travel rubrics are graded by the reference check. A persona's
 * briefing leans the agent on any prompt.
 */
export const travel: ScenarioModel = {
  about: 'a briefed travel-planning team: the task names the destination, a wrong briefing leans a role to its airport',
  agent: (prompt) =>
    prompt.assertions
      ? {
          correctField: TASK_NAMES_ANSWER,
          belief: briefedBelief,
          reads: travelReads,
          summary: travelSummaryReply,
          contextMerge: travelMergeReply,
        }
      : { belief: briefedBelief },
  judge: (messages, promptOf) => (isTravelRubric(messages) ? travelJudgeReply(messages, promptOf) : null),
};
