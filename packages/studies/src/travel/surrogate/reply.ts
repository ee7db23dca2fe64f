import { MERGE_NOTE, type ContextItem, type PromptContext } from '@panta/core';
import type { AgentView } from '@panta/llm';
import { briefedBelief } from './belief.js';

/**
 * The surrogate's ContextMerge on the travel scenarios (prompts with assertions): when the agent and the
 * incoming summary hold different answers it names the contradiction with both values, as the paper's merge
 * surfaces "Booking: LIS vs. Planner: BCN" (what the detection latency looks for), and states the verdict:
 * the value with the higher prior field (the task names the destination, so the gold one), the more recent
 * on a tie. Deterministic in what the call reads.
 */

/** What a travel summary (below) holds. */
const HOLD = /^I hold that the destination airport is ([^:]+):/;
export const VERDICT = 'More likely authoritative: ';

function ownLatest(items: readonly ContextItem[]): ContextItem | undefined {
  let latest: ContextItem | undefined;
  for (const c of items) if (c.agent < 0 && (!latest || c.round >= latest.round)) latest = c;
  return latest;
}

const bare = (text: string) => text.replace(/[.\s]+$/, '');

/**
 * The surrogate's ContextSummary on the travel scenarios: short, and about what the agent holds, so that
 * two summaries differ where the agents do (a long restated task, or what it read, would dominate the
 * embedding). Before its
 * first answer an agent holds what its briefing names (the Booking agent's wrong airport) or else the task's
 * destination.
 */
export function travelSummaryReply(agent: AgentView, ctx: PromptContext): string {
  const mine = ownLatest(ctx.context ?? [])?.text ?? briefedBelief(agent, ctx) ?? agent.prompt.accepted[0];
  const x = canonical(agent, mine);
  return `I hold that the destination airport is ${x}: flights into ${x}, plans around ${x}.`;
}

/** The option a text expresses, in one fixed wording: summaries of agents that agree are the same text. */
function canonical(agent: AgentView, text: string): string {
  const option = agent.optionOf(text);
  if (option === 0) return agent.prompt.accepted[0];
  if (option === agent.notKnownOption) return 'not settled';
  return agent.prompt.false_answers[option - 1];
}

export function travelMergeReply(agent: AgentView, ctx: PromptContext): string {
  const incoming = ctx.incoming;
  if (!incoming) return 'No incoming context to compare.';
  const mine = ownLatest(ctx.context ?? []);
  const mineText = mine?.text ?? briefedBelief(agent, ctx) ?? '';
  const theirsText = HOLD.exec(incoming.summary)?.[1];
  if (theirsText === undefined) return `Nothing to adjudicate with agent ${incoming.agent}: its context states no answer yet.`;
  const a = agent.optionOf(mineText);
  const b = agent.optionOf(theirsText);
  if (a === b) return `No direct contradiction with agent ${incoming.agent}: we both hold that ${bare(mineText)}.`;
  const mineRound = mine?.round ?? 0;
  const theirsWin = agent.prior(b) > agent.prior(a) || (agent.prior(b) === agent.prior(a) && incoming.round > mineRound);
  return (
    `Contradiction with agent ${incoming.agent}: it holds "${bare(theirsText)}" (round ${incoming.round}), I hold "${bare(mineText)}" (round ${mineRound}). ` +
    `${VERDICT}${bare(theirsWin ? theirsText : mineText)}.`
  );
}

/** A merge review is read for its verdict alone: it names both sides of the contradiction before it. */
export function travelReads(reads: readonly string[]): readonly string[] {
  if (!reads.some((r) => r.startsWith(MERGE_NOTE))) return reads;
  return reads.map((r) => {
    const at = r.startsWith(MERGE_NOTE) ? r.lastIndexOf(VERDICT) : -1;
    return at < 0 ? r : r.slice(at + VERDICT.length);
  });
}
