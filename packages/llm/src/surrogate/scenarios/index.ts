import { InputError } from '@panta/core';
import type { ScenarioModel } from '../scenario.js';
import { debate } from './debate/index.js';
import { teamFacts } from './team-facts/index.js';

/**
 * The scenario models a spec may name (`backend: {kind: surrogate, scenario: NAME}`): the built-in ones
 * here, one line each, and those a study adds with registerScenario (the studies package registers its
 * own). The surrogate with no scenario named plays IMPLIED_SCENARIOS, each on the calls it recognises;
 * `neutral` plays none.
 */
const BUILT_IN = {
  'team-facts': teamFacts,
  debate,
} satisfies Record<string, ScenarioModel>;

const SCENARIOS = new Map<string, ScenarioModel>(Object.entries(BUILT_IN));

/** Adds a scenario model under a name a spec may then give; a name already taken is refused. */
export function registerScenario(name: string, model: ScenarioModel): void {
  if (name === NEUTRAL_SCENARIO || SCENARIOS.has(name)) throw new Error(`surrogate scenario "${name}" is already registered`);
  SCENARIOS.set(name, model);
}

/** The scenario model registered under `name`, if any. */
export function scenarioModel(name: string): ScenarioModel | undefined {
  return SCENARIOS.get(name);
}

/** The surrogate without task knowledge: no scenario. */
export const NEUTRAL_SCENARIO = 'neutral';

/**
 * What a surrogate that names no scenario plays: the scenarios the surrogate held before they were named,
 * each engaging only on the calls it recognises (travel prompts, relay and hub calls, debate calls), so a
 * spec written before keeps its corpus and fingerprint. Fixed: a scenario added later is played only when
 * named. An implied scenario that is not registered (its study not loaded) is not played.
 */
export const IMPLIED_SCENARIOS: readonly string[] = ['travel', 'team-facts', 'debate'];

/** The names a spec's `scenario` may take. */
export function scenarioNames(): string[] {
  return [NEUTRAL_SCENARIO, ...SCENARIOS.keys()];
}

/** The scenario models a surrogate plays, in the order they are asked; throws on an unknown name. */
export function resolveScenarios(name: string | undefined): readonly ScenarioModel[] {
  if (name === undefined) return IMPLIED_SCENARIOS.flatMap((n) => SCENARIOS.get(n) ?? []);
  if (name === NEUTRAL_SCENARIO) return [];
  const model = SCENARIOS.get(name);
  if (!model) throw new Error(`unknown surrogate scenario "${name}" (known: ${scenarioNames().join(', ')})`);
  return [model];
}

/** Refuses, naming the spec's field, a surrogate scenario that no scenario model answers to. */
export function checkScenario(backend: { kind: string; scenario?: string }, file: string, field: string): void {
  if (backend.kind !== 'surrogate' || backend.scenario === undefined) return;
  if (backend.scenario === NEUTRAL_SCENARIO || SCENARIOS.has(backend.scenario)) return;
  throw new InputError(
    file,
    `${field}.scenario`,
    `unknown surrogate scenario "${backend.scenario}"`,
    `use one of ${scenarioNames().join(', ')}`,
  );
}
