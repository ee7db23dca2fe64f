import { InputError } from '@panta/core';
import type { ScenarioModel } from '../scenario.js';
import { debate } from './debate/index.js';
import { teamFacts } from './team-facts/index.js';
import { travel } from './travel/index.js';

/**
 * The scenario models a spec may name (`backend: {kind: surrogate, scenario: NAME}`): one line each. The
 * surrogate with no scenario named plays IMPLIED_SCENARIOS, each on the calls it recognises; `neutral`
 * plays none.
 */
export const SCENARIOS = {
  travel,
  'team-facts': teamFacts,
  debate,
} satisfies Record<string, ScenarioModel>;

export type ScenarioName = keyof typeof SCENARIOS;

/** The surrogate without task knowledge: no scenario. */
export const NEUTRAL_SCENARIO = 'neutral';

/**
 * What a surrogate that names no scenario plays: the scenarios the surrogate held before they were named,
 * each engaging only on the calls it recognises (travel prompts, relay and hub calls, debate calls), so a
 * spec written before keeps its corpus and fingerprint. Fixed: a scenario added later is played only when
 * named.
 */
export const IMPLIED_SCENARIOS: readonly ScenarioName[] = ['travel', 'team-facts', 'debate'];

/** The names a spec's `scenario` may take. */
export function scenarioNames(): string[] {
  return [NEUTRAL_SCENARIO, ...Object.keys(SCENARIOS)];
}

/** The scenario models a surrogate plays, in the order they are asked; throws on an unknown name. */
export function resolveScenarios(name: string | undefined): readonly ScenarioModel[] {
  if (name === undefined) return IMPLIED_SCENARIOS.map((n) => SCENARIOS[n]);
  if (name === NEUTRAL_SCENARIO) return [];
  if (!Object.hasOwn(SCENARIOS, name)) throw new Error(`unknown surrogate scenario "${name}" (known: ${scenarioNames().join(', ')})`);
  return [SCENARIOS[name as ScenarioName]];
}

/** Refuses, naming the spec's field, a surrogate scenario that no scenario model answers to. */
export function checkScenario(backend: { kind: string; scenario?: string }, file: string, field: string): void {
  if (backend.kind !== 'surrogate' || backend.scenario === undefined) return;
  if (backend.scenario === NEUTRAL_SCENARIO || Object.hasOwn(SCENARIOS, backend.scenario)) return;
  throw new InputError(
    file,
    `${field}.scenario`,
    `unknown surrogate scenario "${backend.scenario}"`,
    `use one of ${scenarioNames().join(', ')}`,
  );
}
