import type { JudgeCallsDef } from '@panta/core';
import { hasTcs } from './measures.js';
import { TRAVEL_VERDICT_MAX_TOKENS, travelRubric } from './rubric.js';

/**
 * What travel.parquet asks an LLM judge, as `panta plan` counts it (docs/travel.md): on a travel run the
 * assertions rubric per answer and the TCS rubric once, on the final itinerary (the final step's N answers);
 * none on the software-sprint scenarios, scored on HR only.
 */
export const travelJudgeCalls: JudgeCallsDef = {
  kind: 'travel-judge',
  cost(run, { answer, answers, tokens }) {
    if (!run.prompt.assertions) return null;
    const n = run.n;
    const tcs = hasTcs(run.prompt) ? 1 : 0;
    const per = (kind: 'assertions') => tokens(travelRubric(kind, run.prompt, '')) + answer;
    return {
      calls: answers + tcs,
      promptTokens: answers * per('assertions') + tcs * (tokens(travelRubric('tcs', run.prompt, '')) + n * answer),
      completionTokens: (answers + tcs) * TRAVEL_VERDICT_MAX_TOKENS,
    };
  },
};
