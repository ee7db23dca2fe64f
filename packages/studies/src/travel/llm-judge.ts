import type { Prompt } from '@panta/core';
import type { RubricJudge } from '@panta/corpus';
import type { TravelJudge, TravelJudgement, TravelJudgeRequest } from './judged.js';
import type { AssertionVerdict } from './measures.js';
import {
  parseAssertionReply,
  parseTcsReply,
  TRAVEL_VERDICT_MAX_TOKENS,
  type TravelRubricKind,
  travelRubric,
  travelVerdictKey,
} from './rubric.js';

/** Rubric calls open at once; the backend's own max_in_flight and retries govern the calls themselves. */
export const TRAVEL_JUDGE_CONCURRENCY = 64;

/**
 * The sweep's LLM judge as travel.parquet's judge: every distinct (rubric, prompt, normalised answer) is
 * asked once (the assertions rubric for every answer, the TCS rubric for every final itinerary), through the
 * judge's verdict store, so a resumed or repeated finish pays for none again and verify reads them back.
 */
export function llmTravelJudge(judge: RubricJudge, concurrency = TRAVEL_JUDGE_CONCURRENCY): TravelJudge {
  return {
    model: judge.model,
    async judgeAll(requests: readonly TravelJudgeRequest[]): Promise<TravelJudgement> {
      const asks = new Map<string, { kind: TravelRubricKind; prompt: Prompt; answer: string }>();
      for (const r of requests) {
        for (const answer of r.answers)
          asks.set(travelVerdictKey('assertions', r.prompt.id, answer), { kind: 'assertions', prompt: r.prompt, answer });
        for (const answer of r.itineraries)
          asks.set(travelVerdictKey('tcs', r.prompt.id, answer), { kind: 'tcs', prompt: r.prompt, answer });
      }
      const replies = new Map<string, AssertionVerdict[] | (number | null)[] | null>();
      const queue = [...asks];
      const work = async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const [key, { kind, prompt, answer }] = next;
          const parse = (text: string) =>
            kind === 'assertions' ? parseAssertionReply(text, prompt.assertions ?? []) : parseTcsReply(text);
          const text = await judge.rubricReply(
            key,
            travelRubric(kind, prompt, answer),
            TRAVEL_VERDICT_MAX_TOKENS,
            (t) => parse(t) !== null,
          );
          replies.set(key, text === null ? null : parse(text));
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) }, work));
      return {
        verdicts: (prompt, answer) =>
          (replies.get(travelVerdictKey('assertions', prompt.id, answer)) as AssertionVerdict[] | null | undefined) ?? null,
        tcs: (prompt, answer) => (replies.get(travelVerdictKey('tcs', prompt.id, answer)) as (number | null)[] | null | undefined) ?? null,
      };
    },
  };
}
