import { InputError } from '@panta/core';
import type { ScenarioModel } from '../scenario.js';
import { ising, isingMeanField, potts, pottsMeanField } from './heat-bath/index.js';

/**
 * The scenario models a spec may name (`backend: {kind: surrogate, scenario: NAME}`): the built-in ones
 * here, study-free physics (heat-bath spins), one line each, and every study's, registered with
 * registerScenario (the studies package registers its own). The surrogate with no scenario named plays impliedScenarios(), each on the calls it recognises;
 * `neutral` plays none.
 */
const BUILT_IN = {
  ising,
  potts,
  'ising-meanfield': isingMeanField,
  'potts-meanfield': pottsMeanField,
} satisfies Record<string, ScenarioModel>;

const SCENARIOS = new Map<string, ScenarioModel>(Object.entries(BUILT_IN));

/** Implied scenarios studies registered, in the order registered. */
const REGISTERED_IMPLIED: string[] = [];

/**
 * Adds a scenario model under a name a spec may then give; a name already taken is refused. `implied`: a
 * surrogate naming no scenario plays it too (a scenario the surrogate held before scenarios were named).
 */
export function registerScenario(name: string, model: ScenarioModel, options: { implied?: boolean } = {}): void {
  if (name === NEUTRAL_SCENARIO || SCENARIOS.has(name)) throw new Error(`surrogate scenario "${name}" is already registered`);
  SCENARIOS.set(name, model);
  if (options.implied) REGISTERED_IMPLIED.push(name);
}

/** The scenario model registered under `name`, if any. */
export function scenarioModel(name: string): ScenarioModel | undefined {
  return SCENARIOS.get(name);
}

/** The surrogate without task knowledge: no scenario. */
export const NEUTRAL_SCENARIO = 'neutral';

/**
 * What a surrogate that names no scenario plays: the scenarios the surrogate held before they were named,
 * each engaging only on the calls it recognises (a study's prompts, relay and hub calls, debate calls), so a
 * spec written before keeps its corpus and fingerprint: those studies registered as implied, in the order
 * registered. A scenario added later is played only when named.
 */
export function impliedScenarios(): readonly string[] {
  return [...REGISTERED_IMPLIED];
}

/** The names a spec's `scenario` may take. */
export function scenarioNames(): string[] {
  return [NEUTRAL_SCENARIO, ...SCENARIOS.keys()];
}

/** The scenario models a surrogate plays, in the order they are asked; throws on an unknown name. */
export function resolveScenarios(name: string | undefined): readonly ScenarioModel[] {
  if (name === undefined) return impliedScenarios().map((n) => SCENARIOS.get(n)!);
  if (name === NEUTRAL_SCENARIO) return [];
  const model = SCENARIOS.get(name);
  if (!model) throw new Error(`unknown surrogate scenario "${name}" (known: ${scenarioNames().join(', ')})`);
  return [model];
}

/**
 * Refuses, naming the spec's field, a surrogate scenario that no scenario model answers to, and an `initial`
 * condition given to a scenario that is not a heat-bath spin model (no other scenario has one).
 */
export function checkScenario(backend: { kind: string; scenario?: string; initial?: string }, file: string, field: string): void {
  if (backend.kind !== 'surrogate') return;
  if (backend.initial !== undefined && !(backend.scenario !== undefined && backend.scenario in BUILT_IN))
    throw new InputError(
      file,
      `${field}.initial`,
      `an initial condition is for the heat-bath spin scenarios, not ${backend.scenario === undefined ? 'a surrogate naming no scenario' : `scenario "${backend.scenario}"`}`,
      `name one of ${Object.keys(BUILT_IN).join(', ')} as the scenario, or remove initial`,
    );
  if (backend.scenario === undefined) return;
  if (backend.scenario === NEUTRAL_SCENARIO || SCENARIOS.has(backend.scenario)) return;
  throw new InputError(
    file,
    `${field}.scenario`,
    `unknown surrogate scenario "${backend.scenario}"`,
    `use one of ${scenarioNames().join(', ')}`,
  );
}
