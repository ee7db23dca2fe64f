import { existsSync, readFileSync } from 'node:fs';
import { judgeCachePath } from '@panta/corpus';
import type { TravelJudge, TravelJudgement } from './judged.js';
import { parseAssertionReply, parseTcsReply, travelVerdictKey } from './rubric.js';

/** Every reply the corpus's verdict store file holds, by key (a torn last line is skipped). */
export function storedReplies(out: string): Map<string, string> {
  const stored = new Map<string, string>();
  const file = judgeCachePath(out);
  if (existsSync(file))
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const { key, tag } = JSON.parse(line) as { key: string; tag: string };
        stored.set(key, tag);
      } catch {
        // a torn last line after a crash: that verdict was asked for again and appended later
      }
    }
  return stored;
}

/**
 * The LLM judge's travel verdicts as the corpus keeps them (`.state/judge-cache.jsonl`, the verdict store's
 * file): verify recomputes an LLM-judged travel.parquet from them without a call. The judge never stores a
 * failure, so a verdict missing here is one that failed at finish, and counts as a judge failure again.
 */
export function storedTravelJudge(out: string, model: string): TravelJudge {
  const stored = storedReplies(out);
  const judgement: TravelJudgement = {
    verdicts: (prompt, answer) => {
      const reply = stored.get(travelVerdictKey('assertions', prompt.id, answer));
      return reply === undefined ? null : parseAssertionReply(reply, prompt.assertions ?? []);
    },
    tcs: (prompt, answer) => {
      const reply = stored.get(travelVerdictKey('tcs', prompt.id, answer));
      return reply === undefined ? null : parseTcsReply(reply);
    },
  };
  return { model, judgeAll: async () => judgement };
}
