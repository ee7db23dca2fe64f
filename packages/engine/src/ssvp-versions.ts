import { encodeSummaryVersion } from '@panta/core';
import { readEvents } from '@panta/corpus';

/**
 * A resumed run of a summary protocol (no-sync, ssvp, full-broadcast): its live versions read back from its
 * durable parts, each the event's answer with the summary the same event wrote (its `summary` row).
 */
export async function readSummaryVersions(parts: readonly string[], wanted: readonly number[]): Promise<Map<number, string>> {
  const answers = new Map<number, string>();
  const summaries = new Map<number, string>();
  for await (const batch of readEvents(parts, {
    columns: ['event', 'role', 'response'],
    where: `role IN ('agent', 'summary') AND event IN (${wanted.join(',')})`,
  })) {
    const events = batch.columns.event as number[];
    const roles = batch.columns.role as string[];
    const responses = batch.columns.response as string[];
    for (let r = 0; r < batch.rows; r++) (roles[r] === 'agent' ? answers : summaries).set(events[r], responses[r]);
  }
  const texts = new Map<number, string>();
  for (const [event, answer] of answers) texts.set(event, encodeSummaryVersion({ answer, summary: summaries.get(event) ?? '' }));
  return texts;
}
