import type { ContextItem, PromptContext } from '@panta/core';
import type { AgentView } from './scenario.js';

/**
 * The surrogate's ContextSummary and ContextMerge replies (SSVP as published), deterministic in what the call
 * reads. A summary says what the agent holds (its latest answer, or at t = 0 its hidden belief), what most of
 * the answers it read say, and its goal: two agents that hold or read different things write summaries far
 * apart, so an injected belief shows in the CDS at the first exchange. A merge names a contradiction when
 * the agent and the incoming summary hold different options, and takes as authoritative the option with the
 * higher prior field (information quality), the more recent one on a tie; it quotes only that option's
 * answer, so an agent reading the review reads the verdict.
 */

const HOLD = /^I hold that (.*?)\. /;

function ownLatest(items: readonly ContextItem[]): ContextItem | undefined {
  let latest: ContextItem | undefined;
  for (const c of items) if (c.agent < 0 && (!latest || c.round >= latest.round)) latest = c;
  return latest;
}

/** The answer the majority of the read answers express (ties: the option listed first), and how many were read. */
function majority(agent: AgentView, items: readonly ContextItem[]): { text: string; read: number } | undefined {
  const counts = new Map<number, { n: number; text: string }>();
  let read = 0;
  for (const c of items) {
    if (c.agent < 0) continue;
    read++;
    const o = agent.optionOf(c.text);
    const e = counts.get(o);
    if (e) e.n++;
    else counts.set(o, { n: 1, text: c.text });
  }
  let best: { n: number; text: string } | undefined;
  for (const e of counts.values()) if (!best || e.n > best.n) best = e;
  return best ? { text: best.text, read } : undefined;
}

function held(ctx: PromptContext, items: readonly ContextItem[]): string | undefined {
  return ownLatest(items)?.text ?? ctx.belief;
}

/** An answer inside a sentence: without its own final period. */
function bare(text: string): string {
  return text.replace(/[.\s]+$/, '');
}

export function summaryReply(agent: AgentView, ctx: PromptContext): string {
  const items = ctx.context ?? [];
  const mine = held(ctx, items);
  const most = majority(agent, items);
  const first = mine === undefined ? 'I have not answered yet. ' : `I hold that ${bare(mine)}. `;
  const second = most ? `Of the ${most.read} answers I read, most say: ${bare(most.text)}. ` : 'I have read no other answer yet. ';
  return `${first}${second}My goal is to answer: ${ctx.question}`;
}

export function contextMergeReply(agent: AgentView, ctx: PromptContext): string {
  const items = ctx.context ?? [];
  const incoming = ctx.incoming;
  if (!incoming) return 'No incoming context to compare.';
  const mine = ownLatest(items);
  const mineText = mine?.text ?? ctx.belief ?? '';
  const theirsText = HOLD.exec(incoming.summary)?.[1] ?? incoming.summary;
  const a = agent.optionOf(mineText);
  const b = agent.optionOf(theirsText);
  if (a === b) return `No direct contradiction with agent ${incoming.agent}: we both hold that ${mineText}.`;
  const mineRound = mine?.round ?? 0;
  const theirsWin = agent.prior(b) > agent.prior(a) || (agent.prior(b) === agent.prior(a) && incoming.round > mineRound);
  return (
    `Contradiction with agent ${incoming.agent}: its context (round ${incoming.round}) and mine (round ${mineRound}) disagree on the answer. ` +
    `More likely authoritative: ${theirsWin ? theirsText : mineText}`
  );
}
