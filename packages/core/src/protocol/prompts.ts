import type { ChatMessages } from '../prompt.js';

/**
 * The protocols' own prompts (DESIGN.md 4). Like the agent template, shared text comes first. They are fixed
 * text for now: a sweep names its agent template, not these.
 */
export const PROTOCOL_SYSTEM =
  'You review the answers of a group of agents to one question. Be brief and factual.';

/** ssvp: a divergent neighbourhood is read through this call, never as raw text. */
export function renderMerge(question: string, own: string, neighbours: readonly string[]): ChatMessages {
  const lines = neighbours.map((a, i) => `- Source ${i + 1}: ${a}`).join('\n');
  return {
    system: PROTOCOL_SYSTEM,
    user:
      `Question: ${question}\n` +
      `Answer under review: ${own}\n` +
      `Answers of its neighbours, which diverge from it:\n${lines}\n` +
      'Name the contradictions between these answers and say which source is more likely right, in two short sentences.',
  };
}

/** What the agent's update shows in place of its neighbours once a merge has read them. */
export function mergeNote(merge: string): string {
  return `Review of your neighbours' answers: ${merge}`;
}

/** drift-policy: compares the population's majority answer after two consecutive sweeps. */
export function renderDriftJudge(question: string, sweep: number, before: string, after: string): ChatMessages {
  return {
    system: PROTOCOL_SYSTEM,
    user:
      `Question: ${question}\n` +
      `Majority answer after round ${sweep - 1}: ${before}\n` +
      `Majority answer after round ${sweep}: ${after}\n` +
      'Has the group drifted away from the question or from its earlier answer? Reply DRIFT or STABLE, then give one short reason.',
  };
}

/** A drift verdict: the reply's first word decides; anything else counts as no drift. */
export function isDrift(verdict: string): boolean {
  return /^\W*drift\b/i.test(verdict.trim());
}

/** drift-policy: on drift, a moderator writes the message that joins every prompt of the next sweep. */
export function renderModerator(question: string, sweep: number, before: string, after: string): ChatMessages {
  return {
    system: PROTOCOL_SYSTEM,
    user:
      `Question: ${question}\n` +
      `The group drifted: after round ${sweep - 1} its majority answer was: ${before}\n` +
      `After round ${sweep} it is: ${after}\n` +
      'Write one short message to the group that brings the discussion back to the question.',
  };
}

/** belief-board: joins the agent's system message, so its reply carries board entries. */
export const BOARD_INSTRUCTION =
  'Reply with JSON only: {"answer": "<your answer in one short sentence>", "entries": [{"object": "<what the claim is about>", ' +
  '"claim": "<the claim>", "confidence": <0 to 1>}]}. Entries go on a shared belief board; an entry about an object you wrote ' +
  'before revises your earlier entry.';

/** The hidden part of a heterogeneous agent's system message. */
export function personaText(entry: { persona?: string; belief?: string }): string {
  const parts: string[] = [];
  if (entry.persona) parts.push(entry.persona);
  if (entry.belief) parts.push(`Privately, you believe the answer is: ${entry.belief}`);
  return parts.join('\n');
}
