import type { Prompt } from '@panta/core';
import type { AssertionVerdict } from './measures.js';

/**
 * The LLM judge's travel verdicts, looked up per text once they are all in (asked at finish, or read back
 * from the verdict store by verify). Null for a text means the judge failed on it: its reply was not the
 * JSON asked for, or the call failed.
 */
export interface TravelJudgement {
  /** Per assertion of one answer: right, wrong or absent (the assertions rubric). */
  verdicts(prompt: Prompt, answer: string): AssertionVerdict[] | null;
  /** Per TCS dimension of one final itinerary: a score 0..1, null where it says nothing on it. */
  tcs(prompt: Prompt, answer: string): (number | null)[] | null;
}

/** What a judgement needs asked: per travel run its prompt, every answer and its final itinerary (none when the run has no answer). */
export interface TravelJudgeRequest {
  prompt: Prompt;
  answers: readonly string[];
  itineraries: readonly string[];
}

/** An LLM judge for the travel table: its name (travel.parquet's `judge`) and the asking. */
export interface TravelJudge {
  readonly model: string;
  judgeAll(requests: readonly TravelJudgeRequest[]): Promise<TravelJudgement>;
}

/** The mean of the numbers, null for none. */
export function meanOf(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}
