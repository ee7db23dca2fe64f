import type { ChatMessages, Prompt } from '@panta/core';
import { contribute, generatePersonas, judgeDrift, moderate, vote } from './team-debate.js';
import { aggregate, decompose, relayReply, workerReply } from './team-facts.js';
import { readTeamCall } from './team-read.js';

/**
 * The surrogate's reply to a team call (docs/teams.md), or null when the messages are not one. It reads
 * the call from its text, in process as in `panta serve-surrogate`, so both answer the same; the reply is
 * a pure function of (messages, seed, max_tokens).
 */
export function teamReply(messages: ChatMessages, seed: number, maxTokens: number, prompts: readonly Prompt[]): string | null {
  const view = readTeamCall(messages, prompts);
  if (!view) return null;
  switch (view.role) {
    case 'relay':
      return relayReply(view, seed, maxTokens);
    case 'orchestrator':
      return decompose(view);
    case 'worker':
      return workerReply(view, seed, maxTokens);
    case 'aggregator':
      return aggregate(view, seed);
    case 'persona-gen':
      return generatePersonas(Number(/Name (\d+) different experts/.exec(messages.user)?.[1] ?? 3));
    case 'persona':
      return contribute(view, seed);
    case 'vote':
      return vote(view, seed);
    case 'drift-judge':
      return judgeDrift(view, seed);
    case 'feedback':
      return moderate(view);
  }
}
