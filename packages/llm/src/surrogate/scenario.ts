import type { ChatMessages, Prompt, PromptContext, SurrogateBackendSpec } from '@panta/core';
import type { TeamView } from './team-read.js';

/**
 * A scenario model: what a study adds to the neutral surrogate so that it plays the study's scenario (a
 * briefed planning team, a relay that loses facts, a debate that wanders). The neutral agent knows no task:
 * it reads the answers a call shows, picks an option by the Potts rule and words it. A scenario changes
 * some of that through the hooks below; a hook that is absent, or answers undefined / null, leaves the call
 * to the neutral agent. A scenario is a study's own (packages/studies/src/<study>/surrogate), registered
 * with registerScenario, and a spec names it: `backend: {kind: surrogate, scenario: NAME}`.
 */
export interface ScenarioModel {
  /** One line: what the scenario models, and where its constants come from. */
  readonly about: string;
  /** The agent's hooks on one prompt; undefined: the neutral agent as is on that prompt. */
  agent?(prompt: Prompt): AgentHooks | undefined;
  /** A team call's reply (a relay member, a debate's voter); null: the neutral agent answers it. */
  team?(view: TeamView, seed: number, maxTokens: number, messages: ChatMessages): string | null;
  /** A judge rubric's reply; null: not a rubric of this scenario. Throws on its own rubric it cannot read. */
  judge?(messages: ChatMessages, promptOf: (question: string) => Prompt | undefined): string | null;
}

/** What a scenario reads of the agent it changes. */
export interface AgentView {
  readonly prompt: Prompt;
  /** The backend's spec (its coupling J, its fields). */
  readonly spec: SurrogateBackendSpec;
  /** 0 = correct, 1..F = known false answer F-1, notKnownOption = not known. */
  optionOf(text: string): number;
  readonly notKnownOption: number;
  /** The option's prior field (with the scenario's own added). */
  prior(option: number): number;
}

export interface AgentHooks {
  /** Added to the correct option's field (a task that names its answer). */
  readonly correctField?: number;
  /** The hidden belief an agent call leans to, when the call shows a persona (default: the population's belief). */
  belief?(agent: AgentView, context: PromptContext): string | undefined;
  /** The answers an agent call reads, from those it is shown (a merge review read for its verdict). */
  reads?(shown: readonly string[]): readonly string[];
  /**
   * An agent call's whole reply, in place of the Potts rule and its wording (the heat-bath spin models read
   * the neighbours' answers themselves); undefined: the neutral agent answers the call.
   */
  reply?(agent: AgentView, seed: number, temperature: number, context: PromptContext): string | undefined;
  /** ssvp's ContextSummary and ContextMerge replies. */
  summary?(agent: AgentView, context: PromptContext): string;
  contextMerge?(agent: AgentView, context: PromptContext): string;
}
