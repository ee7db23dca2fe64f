import type { ScenarioModel } from '@panta/llm';
import { aggregate, debaterReply, decompose, list, readKnown, relayReply, workerReply } from './facts.js';
import { extractorReply, observerReply } from './observer.js';

/**
 * Relay and hub teams that find and lose facts (Lost in Propagation, and its belief board arms): a member
 * finds at most two facts a call, a hand-off note loses what its token budget cannot hold, and board
 * members take up parts from the board; the observer's belief table and the extractor of the observer arms;
 * down's debates, called on a part a member could not find.
 */
export const teamFacts: ScenarioModel = {
  about: 'relay and hub members that find a few facts a call and lose some at each hand-off (and the board arms)',
  team(view, seed, maxTokens) {
    switch (view.role) {
      case 'relay':
        return relayReply(view, seed, maxTokens);
      case 'orchestrator':
        return decompose(view);
      case 'worker':
        return workerReply(view, seed, maxTokens);
      case 'aggregator':
        return aggregate(view, seed);
      case 'observer':
        return observerReply(view, (text) => readKnown(view.prompt, text));
      case 'extractor':
        return extractorReply(view, (text) => readKnown(view.prompt, text), list);
      case 'debater':
        return debaterReply(view, seed);
      default:
        return null;
    }
  },
};
