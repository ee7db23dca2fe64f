import type { Prompt } from './dataset.js';
import { InputError } from './errors.js';
import { buildGraph, checkSize, edgeListSize, geometryLabel, type GeometrySpec, type Graph } from './geometry/index.js';
import type { Population, PopulationEntry } from './population.js';
import type { PromptTemplate } from './prompt-types.js';
import type { RunControls } from './protocol/control.js';
import { mixSeed } from './rng.js';
import { dynamicsArms, populationArms, templateArms } from './spec/arms.js';
import { startGrid } from './spec/temperatures.js';
import type { TeamRun } from './team/calls.js';
import { isTeamDynamics, teamEventCount } from './team/schedules.js';
import { checkTeamArm, checkTeamSpec, teamControls } from './team/spec.js';
import type { Dynamics, Protocol, SweepSpec } from './spec/schema.js';

/** Names of a run's template and population arms, where the sweep grids them. */
export interface RunArms {
  template?: string;
  population?: string;
}

/**
 * What the spec's template and population files hold, one entry per arm in the spec's order (see
 * templateArms, populationArms): undefined for the default template or a homogeneous arm. Planning
 * without them (verify, merge) gives the same runs, ids and seeds, without their contents.
 */
export interface ArmFiles {
  templates?: readonly (PromptTemplate | undefined)[];
  populations?: readonly (PopulationEntry[] | undefined)[];
}

/** One run: a configuration (prompt x geometry x N x T x protocol x dynamics x template x population) and one trial. */
export interface RunPlan {
  runId: string;
  configId: string;
  trial: number;
  prompt: Prompt;
  geometry: GeometrySpec;
  geometryLabel: string;
  n: number;
  /** Nominal degree of the geometry at this N. */
  k: number;
  temperature: number;
  protocol: Protocol;
  dynamics: Dynamics;
  /** Its template arm's template when the spec names one (absent: the sweep's default). */
  template?: PromptTemplate;
  /** Arm names, present only for the axes the sweep grids. */
  arms?: RunArms;
  /** The spec's `neighbour_order: per-run` (absent: a fresh order per event; see Schedule). */
  neighbourOrder?: 'per-run';
  sweeps: number;
  /** Derived from the sweep seed and the run id only, so adding runs to a grid never changes others. */
  seed: number;
  /** Protocol parameters, annealing and early stopping: the same for every run of a sweep. */
  controls: RunControls;
  /** Personas or hidden beliefs, when the sweep has a population file. */
  population?: Population;
}

/** ssvp.tau once the loader has turned {calibrate, from} into the calibrated number (engine's resolveTau). */
function resolvedTau(tau: SweepSpec['ssvp']['tau']): number {
  if (typeof tau === 'number') return tau;
  throw new Error(`ssvp.tau {calibrate: ${tau.calibrate}, from: ${tau.from}} is planned before it was resolved to a number`);
}

/** What the spec's controls say, as a run carries them. */
export function runControls(spec: SweepSpec): RunControls {
  return {
    tau: resolvedTau(spec.ssvp.tau),
    ...(spec.ssvp.encoder ? { encoder: spec.ssvp.encoder } : {}),
    ...(spec.annealing ? { annealing: spec.annealing } : {}),
    ...(spec.early_stopping ? { earlyStopping: spec.early_stopping } : {}),
  };
}

/** Edge lists of `edges` geometries, keyed by the path written in the spec. */
export type EdgeLists = ReadonlyMap<string, [number, number][]>;

/**
 * A configuration's id. Synchronous runs carry `-sync` whether or not dynamics is gridded (it always was);
 * template and population arms appear only when gridded, so a sweep without those axes keeps its ids.
 */
export function configId(
  promptId: string,
  label: string,
  n: number,
  temperature: number,
  protocol: string,
  dynamics: string,
  arms: RunArms = {},
): string {
  const tpl = arms.template !== undefined ? `-tpl-${arms.template}` : '';
  const pop = arms.population !== undefined ? `-pop-${arms.population}` : '';
  const kind = dynamics === 'synchronous' ? '-sync' : isTeamDynamics(dynamics) ? `-${dynamics}` : '';
  return `${promptId}-${label}-n${n}-T${temperature}-${protocol}${kind}${tpl}${pop}`;
}

/**
 * The key of a configuration group of adaptive temperatures (adaptive.ts): every run that differs only in
 * size, temperature and trial. Its config id without size and temperature.
 */
export function adaptiveGroup(promptId: string, label: string, protocol: string, dynamics: string, arms: RunArms = {}): string {
  return configId(promptId, label, 0, 0, protocol, dynamics, arms).replace(`${label}-n0-T0-`, `${label}-`);
}

/** The template and population arm names a config id carries (configId's `-tpl-` and `-pop-` suffixes). */
export function configArms(config: string): RunArms {
  const arms: RunArms = {};
  const template = /-tpl-(.+?)(?:-pop-|$)/.exec(config)?.[1];
  const population = /-pop-(.+)$/.exec(config)?.[1];
  if (template !== undefined) arms.template = template;
  if (population !== undefined) arms.population = population;
  return arms;
}

export function runId(config: string, trial: number): string {
  return `${config}-t${trial}`;
}

/** The sizes each geometry runs at, checked against the geometry. */
function sizesFor(spec: SweepSpec, geometry: GeometrySpec, gi: number, file: string, edgeLists: EdgeLists): number[] {
  const label = geometryLabel(geometry);
  if (geometry.kind === 'edges') {
    const edges = edgeLists.get(geometry.path);
    if (!edges) throw new InputError(file, `geometries[${gi}].path`, `edge list ${geometry.path} was not loaded`, 'check the path');
    return [edgeListSize(edges)];
  }
  let sizes: number[];
  let field: string;
  if (Array.isArray(spec.sizes)) {
    sizes = spec.sizes;
    field = 'sizes';
  } else {
    const key = label in spec.sizes ? label : geometry.kind;
    const entry = spec.sizes[key];
    if (!entry) {
      throw new InputError(file, 'sizes', `no sizes for geometry ${label}`, `add "${label}: [..]" to the sizes map`);
    }
    sizes = entry;
    field = `sizes.${key}`;
  }
  // A team's reads come from its schedule, not from the graph: a spec of team schedules only takes any N.
  const teamsOnly = dynamicsArms(spec).every(isTeamDynamics);
  sizes.forEach((n, i) => {
    const problem = teamsOnly ? null : checkSize(geometry, n);
    if (problem) {
      throw new InputError(
        file,
        `${field}[${i}]`,
        problem,
        `use a size that fits ${label}${Array.isArray(spec.sizes) ? ', or give sizes as a map per geometry' : ''}`,
      );
    }
  });
  return sizes;
}

function checkSizeMapKeys(spec: SweepSpec, file: string): void {
  if (Array.isArray(spec.sizes)) return;
  const names = new Set(spec.geometries.flatMap((g) => [geometryLabel(g), g.kind]));
  for (const key of Object.keys(spec.sizes)) {
    if (!names.has(key)) {
      throw new InputError(file, `sizes.${key}`, `"${key}" is not one of the sweep's geometries`, `use one of ${[...names].join(', ')}`);
    }
  }
}

/** Selects the spec's prompts from the dataset, in the spec's order. */
export function selectPrompts(spec: SweepSpec, dataset: Prompt[], file: string): Prompt[] {
  if (!spec.prompts) return dataset;
  const byId = new Map(dataset.map((p) => [p.id, p]));
  return spec.prompts.map((id, i) => {
    const p = byId.get(id);
    if (!p) {
      const known = dataset
        .slice(0, 8)
        .map((d) => d.id)
        .join(', ');
      throw new InputError(
        file,
        `prompts[${i}]`,
        `unknown prompt id "${id}" in ${spec.dataset}`,
        `use an id of the dataset (${known}${dataset.length > 8 ? ', ...' : ''})`,
      );
    }
    return p;
  });
}

/** Events of a run: the N initial answers and N updates per sweep; a team's calls (docs/teams.md). */
export function runEvents(run: Pick<RunPlan, 'sweeps' | 'n'> & Partial<TeamRun>): number {
  if (run.dynamics !== undefined && isTeamDynamics(run.dynamics)) return teamEventCount(run as TeamRun);
  return (run.sweeps + 1) * run.n;
}

/** Events of a sweep's runs. */
export function sweepEvents(runs: readonly (Pick<RunPlan, 'sweeps' | 'n'> & Partial<TeamRun>)[]): number {
  return runs.reduce((s, r) => s + runEvents(r), 0);
}

/** A configuration's arms of the dynamics, template and population axes, in grid order. */
interface Arm {
  dynamics: Dynamics;
  template?: PromptTemplate;
  population?: Population;
  /** The arm deals a population file (known without reading it: verify and merge plan without the files). */
  populated: boolean;
  names: RunArms;
}

function armsOf(spec: SweepSpec, files: ArmFiles): Arm[] {
  const arms: Arm[] = [];
  const templates = templateArms(spec);
  const populations = populationArms(spec);
  for (const dynamics of dynamicsArms(spec)) {
    templates.forEach((t, ti) => {
      populations.forEach((p, pi) => {
        const template = files.templates?.[ti];
        const entries = files.populations?.[pi];
        const names: RunArms = {};
        if (t.label !== undefined) names.template = t.label;
        if (p.label !== undefined) names.population = p.label;
        arms.push({
          dynamics,
          ...(template ? { template } : {}),
          ...(entries ? { population: { entries, assign: p.assign, fraction: p.fraction } } : {}),
          populated: p.file !== undefined,
          names,
        });
      });
    });
  }
  return arms;
}

/**
 * Expands the grid into runs: a pure function of the spec, the prompts and any edge lists (and the arms'
 * files, which set what runs carry, never their ids). Order: prompt, geometry, size, temperature,
 * protocol, dynamics, template, population, trial.
 */
export function planSweep(
  spec: SweepSpec,
  prompts: Prompt[],
  file: string,
  edgeLists: EdgeLists = new Map(),
  files: ArmFiles = {},
  grids: AdaptiveGrids = new Map(),
): RunPlan[] {
  checkSizeMapKeys(spec, file);
  checkTeamSpec(spec, dynamicsArms(spec), file);
  const controls = runControls(spec);
  const arms = armsOf(spec, files);
  const protocols = Array.isArray(spec.protocol) ? spec.protocol : [spec.protocol];
  const sweepSeed = spec.seed ?? 0;
  const runs: RunPlan[] = [];
  const seen = new Set<string>();
  const sizes = spec.geometries.map((g, gi) => sizesFor(spec, g, gi, file, edgeLists));
  const degrees = new Map<string, number>();
  const drawn = spec.trial_prompts === 'drawn' ? drawPrompts(sweepSeed, spec.trials, prompts.length) : null;
  for (const [pi, prompt] of prompts.entries()) {
    spec.geometries.forEach((geometry, gi) => {
      const label = geometryLabel(geometry);
      for (const n of sizes[gi]) {
        const key = `${label}/${n}`;
        const degree = (): number => {
          if (!degrees.has(key)) degrees.set(key, graphFor(geometry, n, 0, edgeLists).k);
          return degrees.get(key)!;
        };
        for (const temperature of temperatureAxis(spec, grids)) {
          for (const protocol of protocols) {
            for (const arm of arms) {
              checkTeamArm(spec, arm.dynamics, protocol, file);
              if (!inGroupGrid(spec, grids, adaptiveGroup(prompt.id, label, protocol, arm.dynamics, arm.names), temperature)) continue;
              const config = configId(prompt.id, label, n, temperature, protocol, arm.dynamics, arm.names);
              for (let trial = 0; trial < spec.trials; trial++) {
                if (drawn && drawn[trial] !== pi) continue;
                const id = runId(config, trial);
                if (seen.has(id)) {
                  throw new InputError(file, 'geometries', `two configurations share the run id ${id}`, 'remove the repeated grid value');
                }
                seen.add(id);
                runs.push({
                  runId: id,
                  configId: config,
                  trial,
                  prompt,
                  geometry,
                  geometryLabel: label,
                  n,
                  k: isTeamDynamics(arm.dynamics) ? 0 : degree(),
                  temperature,
                  protocol,
                  dynamics: arm.dynamics,
                  ...(arm.template ? { template: arm.template } : {}),
                  ...(arm.names.template !== undefined || arm.names.population !== undefined ? { arms: arm.names } : {}),
                  ...(spec.neighbour_order === 'per-run' ? { neighbourOrder: 'per-run' as const } : {}),
                  sweeps: spec.sweeps,
                  seed: mixSeed(sweepSeed, id),
                  controls: isTeamDynamics(arm.dynamics) ? { ...controls, team: teamControls(spec, arm.populated) } : controls,
                  ...(arm.population ? { population: arm.population } : {}),
                });
              }
            }
          }
        }
      }
    });
  }
  return runs;
}

/**
 * How a new sweep's trials take its prompts (spec `trial_prompts`): drawn per trial by default when every prompt
 * is a scenario with checkable assertions. loadSweep resolves it into the spec; planSweep reads an absent key as
 * `every`, the layout of corpora written before the key existed.
 */
export function trialPromptsOf(spec: Pick<SweepSpec, 'trial_prompts'>, prompts: readonly Prompt[]): 'drawn' | 'every' {
  return spec.trial_prompts ?? (prompts.length > 0 && prompts.every((p) => p.assertions !== undefined) ? 'drawn' : 'every');
}

/** The prompt index each trial runs under `trial_prompts: drawn`: uniform, from the sweep's seed and the trial alone. */
export function drawPrompts(sweepSeed: number, trials: number, prompts: number): number[] {
  return Array.from({ length: trials }, (_x, trial) => mixSeed(sweepSeed, 'trial-prompt', trial) % prompts);
}

/**
 * The temperatures of an adaptive sweep's configuration groups so far, by group key (adaptiveGroup); a group
 * not in it has the start grid. A fixed list ignores it.
 */
export type AdaptiveGrids = ReadonlyMap<string, readonly number[]>;

/** The temperatures the grid loops over: the list, or (adaptive) every group's temperatures and the start grid, ascending. */
function temperatureAxis(spec: SweepSpec, grids: AdaptiveGrids): readonly number[] {
  if (Array.isArray(spec.temperatures)) return spec.temperatures;
  const all = new Set(startGrid(spec.temperatures.adaptive));
  for (const grid of grids.values()) for (const t of grid) all.add(t);
  return [...all].sort((a, b) => a - b);
}

function inGroupGrid(spec: SweepSpec, grids: AdaptiveGrids, group: string, t: number): boolean {
  if (Array.isArray(spec.temperatures)) return true;
  const grid = grids.get(group);
  return grid ? grid.includes(t) : startGrid(spec.temperatures.adaptive).includes(t);
}

/** The interaction graph of a run (random graphs are drawn from the run's own seed). */
export function graphFor(geometry: GeometrySpec, n: number, runSeed: number, edgeLists: EdgeLists): Graph {
  const edges = geometry.kind === 'edges' ? edgeLists.get(geometry.path) : undefined;
  return buildGraph(geometry, n, mixSeed(runSeed, 'graph'), edges);
}
