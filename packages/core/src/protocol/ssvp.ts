import type { ChatMessages, ContextItem, PromptContext } from '../prompt-types.js';

export type { ContextItem };

/**
 * SSVP as published (Hallucination as Context Drift, sections 3.3 and 4.3), for populations. At each event
 * the agent first writes a ContextSummary of its current context (the paper's prompt); the Context Divergence
 * Score of a pair is the cosine distance of the two summaries' embeddings. Arms:
 * - `no-sync`: summaries are written and measured, never merged; the agent updates as under glauber (its
 *   neighbours' answers are its task messages);
 * - `ssvp`: for every neighbour whose CDS with the agent exceeds tau, a ContextMerge call (the paper's
 *   prompt, the agent's full timestamped context prepended) adjudicates; the agent then reads that
 *   neighbour through the merge's review, and every other neighbour's answer as under glauber;
 * - `full-broadcast`: every agent reads every other agent's answer at every update (its read set is the
 *   whole population), summaries measured as in no-sync.
 *
 * Read sets stay exact and known before the event runs: a summary depends on what the event reads (the
 * agent's own latest version and its neighbours'), and each version carries its author's summary, so the
 * neighbours' summaries the gate compares are in the read set already. The merges are extra calls inside the
 * event (rows before the agent's, like the summary), so the DAG of events is the glauber one.
 */

/** The paper's ContextSummary prompt, verbatim. */
export const SUMMARY_INSTRUCTION = 'Summarize your current spatial context, task history, and active goals in 3 sentences or fewer.';

/** The paper's ContextMerge prompt, verbatim. */
export const CONTEXT_MERGE_INSTRUCTION =
  'Identify any beliefs you hold that directly contradict the incoming context. State which source is more likely authoritative given the timestamps and information quality involved.';

/** The version an agent of a summary protocol publishes: its answer and the summary its event wrote. */
export interface SummaryVersion {
  answer: string;
  summary: string;
}

export function encodeSummaryVersion(v: SummaryVersion): string {
  return JSON.stringify([v.answer, v.summary]);
}

export function decodeSummaryVersion(text: string): SummaryVersion {
  const [answer, summary] = JSON.parse(text) as [string, string];
  return { answer, summary };
}

function contextLines(items: readonly ContextItem[]): string {
  if (items.length === 0) return '- none yet';
  return items.map((c) => `- [round ${c.round}] ${c.agent < 0 ? 'you' : `agent ${c.agent}`}: ${oneLine(c.text)}`).join('\n');
}

/** Text kept on one line: the context is read back line by line (a served surrogate sees text only). */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const QUESTION = 'Task: answer the question: ';
const CONTEXT = 'Your context, oldest first (round = when it was written):';
const INCOMING = 'Incoming context from ';

/** ContextSummary: the agent's system message (template and persona) and its timestamped context. */
export function renderSummary(system: string, question: string, items: readonly ContextItem[]): ChatMessages {
  return { system, user: `${QUESTION}${oneLine(question)}\n${CONTEXT}\n${contextLines(items)}\n${SUMMARY_INSTRUCTION}` };
}

/** ContextMerge for one pair: the agent's full timestamped context prepended, then the incoming summary. */
export function renderContextMerge(
  system: string,
  question: string,
  items: readonly ContextItem[],
  incoming: { agent: number; round: number; summary: string },
): ChatMessages {
  return {
    system,
    user:
      `${QUESTION}${oneLine(question)}\n${CONTEXT}\n${contextLines(items)}\n` +
      `${INCOMING}agent ${incoming.agent} (round ${incoming.round}): ${oneLine(incoming.summary)}\n${CONTEXT_MERGE_INSTRUCTION}`,
  };
}

/** A summary or merge call read back from its text: the inverse of the renderers above (system unread). */
export type ParsedSsvpCall =
  | { kind: 'summary'; question: string; items: ContextItem[] }
  | { kind: 'context-merge'; question: string; items: ContextItem[]; incoming: { agent: number; round: number; summary: string } };

const ITEM = /^- \[round (\d+)\] (you|agent (\d+)): (.*)$/;

function parseItems(block: string): ContextItem[] | null {
  if (block === '- none yet') return [];
  const items: ContextItem[] = [];
  for (const line of block.split('\n')) {
    const m = ITEM.exec(line);
    if (!m) return null;
    items.push({ round: Number(m[1]), agent: m[3] === undefined ? -1 : Number(m[3]), text: m[4] });
  }
  return items;
}

export function parseSsvpCall(user: string): ParsedSsvpCall | null {
  if (!user.startsWith(QUESTION)) return null;
  const lines = user.split('\n');
  const last = lines[lines.length - 1];
  if (lines[1] !== CONTEXT || (last !== SUMMARY_INSTRUCTION && last !== CONTEXT_MERGE_INSTRUCTION)) return null;
  const question = lines[0].slice(QUESTION.length);
  if (last === SUMMARY_INSTRUCTION) {
    const items = parseItems(lines.slice(2, -1).join('\n'));
    return items ? { kind: 'summary', question, items } : null;
  }
  const incoming = /^Incoming context from agent (\d+) \(round (\d+)\): (.*)$/.exec(lines[lines.length - 2]);
  const items = parseItems(lines.slice(2, -2).join('\n'));
  if (!incoming || !items) return null;
  return {
    kind: 'context-merge',
    question,
    items,
    incoming: { agent: Number(incoming[1]), round: Number(incoming[2]), summary: incoming[3] },
  };
}

/** A summary or context-merge call of PromptContext: the agent's own system message (template, persona). */
export function renderSsvpCall(template: { system: string }, ctx: PromptContext): ChatMessages {
  const system = ctx.persona ? `${template.system}\n${ctx.persona}` : template.system;
  const items = ctx.context ?? [];
  if (ctx.kind === 'context-merge' && ctx.incoming) return renderContextMerge(system, ctx.question, items, ctx.incoming);
  return renderSummary(system, ctx.question, items);
}
