import type { ChatMessages } from '../prompt-types.js';

/**
 * The protocols' own prompts (docs/DESIGN.md#coordination-protocols). Like the agent template, shared text comes first. They are fixed
 * text for now: a sweep names its agent template, not these.
 */
export const PROTOCOL_SYSTEM = 'You review the answers of a group of agents to one question. Be brief and factual.';

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

export const MERGE_NOTE = "Review of your neighbours' answers: ";

/** What the agent's update shows in place of its neighbours once a merge has read them. */
export function mergeNote(merge: string): string {
  return `${MERGE_NOTE}${merge}`;
}

export const BELIEF_LINE = 'Privately, you believe the answer is: ';

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
  if (entry.belief) parts.push(`${BELIEF_LINE}${entry.belief}`);
  return parts.join('\n');
}

/** A protocol call read back from its text (a served model sees text only): the inverse of the renderers above. */
export type ParsedProtocolCall =
  | { kind: 'merge'; question: string; own: string; neighbours: string[] }
  | { kind: 'drift-judge' | 'moderator'; question: string; sweep: number; before: string; after: string };

const MERGE =
  /^Question: ([^\n]*)\nAnswer under review: ([^\n]*)\nAnswers of its neighbours, which diverge from it:\n((?:- Source \d+: [^\n]*\n)*)Name the contradictions/;
const DRIFT_JUDGE =
  /^Question: ([^\n]*)\nMajority answer after round \d+: ([^\n]*)\nMajority answer after round (\d+): ([^\n]*)\nHas the group drifted/;
const MODERATOR =
  /^Question: ([^\n]*)\nThe group drifted: after round \d+ its majority answer was: ([^\n]*)\nAfter round (\d+) it is: ([^\n]*)\nWrite one short message/;

export function parseProtocolCall(messages: ChatMessages): ParsedProtocolCall | null {
  if (messages.system !== PROTOCOL_SYSTEM) return null;
  const merge = MERGE.exec(messages.user);
  if (merge) {
    const neighbours = merge[3]
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => l.replace(/^- Source \d+: /, ''));
    return { kind: 'merge', question: merge[1], own: merge[2], neighbours };
  }
  for (const [kind, re] of [
    ['drift-judge', DRIFT_JUDGE],
    ['moderator', MODERATOR],
  ] as const) {
    const m = re.exec(messages.user);
    if (m) return { kind, question: m[1], sweep: Number(m[3]), before: m[2], after: m[4] };
  }
  return null;
}

/**
 * An agent prompt's protocol parts read back: board instruction and persona (after the template's system
 * text), and a moderator line (before the template's user text). What is left is the template's rendering.
 */
export function splitAgentPrompt(
  templateSystem: string,
  messages: ChatMessages,
): { messages: ChatMessages; board: boolean; persona?: string; belief?: string; moderator?: string } | null {
  if (!messages.system.startsWith(templateSystem)) return null;
  let rest = messages.system.slice(templateSystem.length);
  const board = rest.startsWith(`\n${BOARD_INSTRUCTION}`);
  if (board) rest = rest.slice(BOARD_INSTRUCTION.length + 1);
  if (rest !== '' && !rest.startsWith('\n')) return null;
  const persona = rest.slice(1);
  const belief = persona
    .split('\n')
    .find((l) => l.startsWith(BELIEF_LINE))
    ?.slice(BELIEF_LINE.length);
  let user = messages.user;
  let moderator: string | undefined;
  if (user.startsWith('Moderator: ')) {
    const end = user.indexOf('\n');
    if (end < 0) return null;
    moderator = user.slice('Moderator: '.length, end);
    user = user.slice(end + 1);
  }
  return {
    messages: { system: templateSystem, user },
    board,
    ...(persona ? { persona } : {}),
    ...(belief !== undefined ? { belief } : {}),
    ...(moderator !== undefined ? { moderator } : {}),
  };
}
