import type { Prompt } from './dataset.js';
import { InputError } from './errors.js';
import { buildGraph, checkSize, edgeListSize, geometryLabel, type GeometrySpec, type Graph } from './geometry/index.js';
import type { Population } from './population.js';
import type { RunControls } from './protocol/control.js';
import { mixSeed } from './rng.js';
import type { Protocol, SweepSpec } from './spec/schema.js';

/** One run: a configuration (prompt x geometry x N x T x protocol) and one trial. */
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
  dynamics: SweepSpec['dynamics'];
  sweeps: number;
  /** Derived from the sweep seed and the run id only, so adding runs to a grid never changes others. */
  seed: number;
  /** Protocol parameters, annealing and early stopping: the same for every run of a sweep. */
  controls: RunControls;
  /** Personas or hidden beliefs, when the sweep has a population file. */
  population?: Population;
}

/** What the spec's controls say, as a run carries them. */
export function runControls(spec: SweepSpec): RunControls {
  return {
    tau: spec.ssvp.tau,
    ...(spec.ssvp.encoder ? { encoder: spec.ssvp.encoder } : {}),
    ...(spec.annealing ? { annealing: spec.annealing } : {}),
    ...(spec.early_stopping ? { earlyStopping: spec.early_stopping } : {}),
  };
}

/** Edge lists of `edges` geometries, keyed by the path written in the spec. */
export type EdgeLists = ReadonlyMap<string, [number, number][]>;

export function configId(promptId: string, label: string, n: number, temperature: number, protocol: string, dynamics: string): string {
  return `${promptId}-${label}-n${n}-T${temperature}-${protocol}${dynamics === 'synchronous' ? '-sync' : ''}`;
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
  sizes.forEach((n, i) => {
    const problem = checkSize(geometry, n);
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

/** Events of a run: the N initial answers and N updates per sweep. */
export function runEvents(run: Pick<RunPlan, 'sweeps' | 'n'>): number {
  return (run.sweeps + 1) * run.n;
}

/** Events of a sweep's runs. */
export function sweepEvents(runs: readonly Pick<RunPlan, 'sweeps' | 'n'>[]): number {
  return runs.reduce((s, r) => s + runEvents(r), 0);
}

/**
 * Expands the grid into runs: a pure function of the spec, the prompts and any edge lists. Order:
 * prompt, geometry, size, temperature, protocol, trial.
 */
export function planSweep(
  spec: SweepSpec,
  prompts: Prompt[],
  file: string,
  edgeLists: EdgeLists = new Map(),
  population?: Population['entries'],
): RunPlan[] {
  checkSizeMapKeys(spec, file);
  const controls = runControls(spec);
  const people: Population | undefined =
    spec.population && population ? { entries: population, assign: spec.population.assign, fraction: spec.population.fraction } : undefined;
  const protocols = Array.isArray(spec.protocol) ? spec.protocol : [spec.protocol];
  const sweepSeed = spec.seed ?? 0;
  const runs: RunPlan[] = [];
  const seen = new Set<string>();
  const sizes = spec.geometries.map((g, gi) => sizesFor(spec, g, gi, file, edgeLists));
  const degrees = new Map<string, number>();
  for (const prompt of prompts) {
    spec.geometries.forEach((geometry, gi) => {
      const label = geometryLabel(geometry);
      for (const n of sizes[gi]) {
        const key = `${label}/${n}`;
        if (!degrees.has(key)) degrees.set(key, graphFor(geometry, n, 0, edgeLists).k);
        for (const temperature of spec.temperatures) {
          for (const protocol of protocols) {
            const config = configId(prompt.id, label, n, temperature, protocol, spec.dynamics);
            for (let trial = 0; trial < spec.trials; trial++) {
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
                k: degrees.get(key)!,
                temperature,
                protocol,
                dynamics: spec.dynamics,
                sweeps: spec.sweeps,
                seed: mixSeed(sweepSeed, id),
                controls,
                ...(people ? { population: people } : {}),
              });
            }
          }
        }
      }
    });
  }
  return runs;
}

/** The interaction graph of a run (random graphs are drawn from the run's own seed). */
export function graphFor(geometry: GeometrySpec, n: number, runSeed: number, edgeLists: EdgeLists): Graph {
  const edges = geometry.kind === 'edges' ? edgeLists.get(geometry.path) : undefined;
  return buildGraph(geometry, n, mixSeed(runSeed, 'graph'), edges);
}
