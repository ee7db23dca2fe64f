import type { JudgeCallsDef } from '@panta/core';
import { TRAVEL_VERDICT_MAX_TOKENS, travelRubric } from './rubric.js';

/**
 * What travel.parquet asks an LLM judge, as `panta plan` counts it (docs/travel.md): on a travel run the
 * assertions rubric per answer and the TCS rubric per final answer.
 */
export const travelJudgeCalls: JudgeCallsDef = {
  kind: 'travel-judge',
  cost(run, { answer, answers, tokens }) {
    if (!run.prompt.assertions) return null;
    const n = run.n;
    const per = (kind: 'assertions' | 'tcs') => tokens(travelRubric(kind, run.prompt, '')) + answer;
    return {
      calls: answers + n,
      promptTokens: answers * per('assertions') + n * per('tcs'),
      completionTokens: (answers + n) * TRAVEL_VERDICT_MAX_TOKENS,
    };
  },
};
