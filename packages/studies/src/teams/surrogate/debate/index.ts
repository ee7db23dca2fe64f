import type { ScenarioModel } from '@panta/llm';
import { contribute, generatePersonas, judgeDrift, moderate, vote } from './debate.js';

/**
 * A debate that wanders (Drift No More?): a participant moves off the draft with a chance that grows with
 * the turn, others follow, a judge that sees no gold flags most changes, a moderator's feedback brings the
 * draft back.
 */
export const debate: ScenarioModel = {
  about: 'debate participants who wander off the draft more as turns go on, a judge without gold, a moderator',
  team(view, seed, _maxTokens, messages) {
    switch (view.role) {
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
      default:
        return null;
    }
  },
};
