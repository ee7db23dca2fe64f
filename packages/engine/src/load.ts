import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  DEFAULT_TEMPLATE,
  boundaryGate,
  hasBoundaries,
  DataflowPlanner,
  Schedule,
  graphFor,
  GeometryError,
  parseEdgeList,
  validateEdges,
  type Edge,
  checkBackendLimits,
  checkContextBudget,
  InputError,
  parseDataset,
  parseSweepSpec,
  parseTemplate,
  planSweep,
  selectPrompts,
  parsePopulation,
  type PopulationEntry,
  type Prompt,
  type PromptTemplate,
  type RunPlan,
  type SweepSpec,
} from '@panta/core';

/** Everything a sweep needs, read and validated before anything is written. */
export interface LoadedSweep {
  specFile: string;
  spec: SweepSpec;
  prompts: Prompt[];
  template: PromptTemplate;
  edgeLists: Map<string, Edge[]>;
  /** Personas or hidden beliefs of the spec's population file. */
  population?: PopulationEntry[];
  runs: RunPlan[];
  /** Output folder, absolute. */
  out: string;
  /** Digest of what determines the corpus (spec less out and concurrency, dataset, template, edges). */
  fingerprint: string;
}

export interface SweepOverrides {
  out?: string;
  concurrency?: number;
  seed?: number;
}

function readInput(file: string, what: string, fromFile: string, field: string): string {
  if (!existsSync(file)) throw new InputError(fromFile, field, `${what} ${file} does not exist`, 'correct the path (relative to the spec file)');
  return readFileSync(file, 'utf8');
}

/** An edge list file, parsed and checked by core's parser; its problems become one-line input errors. */
function parseEdges(text: string, file: string): Edge[] {
  try {
    const edges = parseEdgeList(text, file);
    const problem = validateEdges(edges);
    if (problem) throw new GeometryError(problem);
    return edges;
  } catch (e) {
    if (!(e instanceof GeometryError)) throw e;
    const at = /^.*:(\d+): (.*)$/.exec(e.message);
    throw new InputError(file, at ? `line ${at[1]}` : '', at ? at[2]! : e.message, 'write one undirected edge per line as "i j" with 0-based agent indices, no self-loops or repeats');
  }
}

/** Where a backend is and how it is called: settings that do not change what it answers. */
const OPERATIONAL_BACKEND_KEYS = ['base_url', 'api_key_env', 'max_in_flight', 'timeout_ms', 'max_retries', 'max_context_tokens', 'price', 'latency_ms'];

function operationalFree(backend: object): object {
  return Object.fromEntries(Object.entries(backend).filter(([k]) => !OPERATIONAL_BACKEND_KEYS.includes(k)));
}

/**
 * What determines a corpus: the spec less how it is executed (concurrency, look-ahead, output folder) and
 * where the model is served (endpoints, keys, limits, prices). A sweep resumes against another endpoint
 * of the same model; it refuses a corpus made by another model or grid.
 */
export function corpusIdentity(spec: SweepSpec): object {
  const { concurrency: _c, out: _o, lookahead: _l, backend, judge, ...rest } = spec;
  return { ...rest, backend: operationalFree(backend), judge: judge.kind === 'llm' ? { ...judge, backend: operationalFree(judge.backend) } : judge };
}

/** A run's dataflow planner, starting at `startEvent` (where its durable rows end). */
export function plannerFor(sweep: LoadedSweep, run: RunPlan, startEvent: number, control?: { sweep: number; state?: { stop: boolean } }): DataflowPlanner {
  // A run with sweep boundaries starts held at its next one, before the planner plans past it.
  const gate = hasBoundaries(run.protocol, run.controls) ? boundaryGate(run, control?.sweep ?? -1, control?.state?.stop ?? false) : Number.POSITIVE_INFINITY;
  return new DataflowPlanner(new Schedule(run, graphFor(run.geometry, run.n, run.seed, sweep.edgeLists)), sweep.spec.lookahead, startEvent, gate);
}

/** Settings that only make sense together with others. */
function checkControls(spec: SweepSpec, file: string): void {
  const encoder = spec.ssvp.encoder;
  if (encoder && !spec.encoders.some((e) => e.name === encoder)) {
    throw new InputError(file, 'ssvp.encoder', `"${encoder}" is not one of the sweep's encoders`, `use one of ${spec.encoders.map((e) => e.name).join(', ')}`);
  }
  if (spec.annealing?.shape === 'geometric' && (spec.annealing.to <= 0 || spec.temperatures.some((t) => t <= 0))) {
    throw new InputError(file, 'annealing.to', 'a geometric schedule needs positive temperatures at both ends', 'use shape: linear, or temperatures above 0');
  }
  const stop = spec.early_stopping;
  if (stop && Math.max(stop.window, stop.min_sweeps) >= spec.sweeps) {
    throw new InputError(file, 'early_stopping.window', `a run of ${spec.sweeps} sweeps can never settle over ${Math.max(stop.window, stop.min_sweeps)} sweeps`, 'use a smaller window and min_sweeps, or more sweeps');
  }
}

export function loadSweep(specPath: string, overrides: SweepOverrides = {}): LoadedSweep {
  const specFile = resolve(specPath);
  if (!existsSync(specFile)) throw new InputError(specPath, '', 'the sweep spec does not exist', 'give the path of a YAML sweep spec, e.g. examples/quickstart.yaml');
  const spec = parseSweepSpec(readFileSync(specFile, 'utf8'), specPath);
  if (overrides.concurrency !== undefined) spec.concurrency = overrides.concurrency;
  if (overrides.seed !== undefined) spec.seed = overrides.seed;
  const base = dirname(specFile);
  const datasetFile = resolve(base, spec.dataset);
  const datasetText = readInput(datasetFile, 'dataset', specPath, 'dataset');
  const prompts = selectPrompts(spec, parseDataset(datasetText, datasetFile), specPath);
  let template = DEFAULT_TEMPLATE;
  let templateText = '';
  if (spec.template) {
    const file = resolve(base, spec.template);
    templateText = readInput(file, 'template', specPath, 'template');
    template = parseTemplate(templateText, file);
  }
  const edgeLists = new Map<string, Edge[]>();
  const edgeTexts: string[] = [];
  spec.geometries.forEach((g, i) => {
    if (g.kind !== 'edges' || edgeLists.has(g.path)) return;
    const file = resolve(base, g.path);
    const text = readInput(file, 'edge list', specPath, `geometries[${i}].path`);
    edgeLists.set(g.path, parseEdges(text, file));
    edgeTexts.push(text);
  });
  let population: PopulationEntry[] | undefined;
  let populationText = '';
  if (spec.population) {
    const file = resolve(base, spec.population.file);
    populationText = readInput(file, 'population file', specPath, 'population.file');
    population = parsePopulation(populationText, file);
  }
  checkControls(spec, specPath);
  const runs = planSweep(spec, prompts, specPath, edgeLists, population);
  checkBackendLimits(spec, specPath);
  checkContextBudget(spec, runs, template, specPath);
  const out = resolve(overrides.out ?? spec.out ?? `runs/${spec.name}`);
  const determining = corpusIdentity(spec);
  const fingerprint = createHash('sha256')
    .update(JSON.stringify(determining))
    .update('\0')
    .update(JSON.stringify(prompts))
    .update('\0')
    .update(JSON.stringify(template))
    .update('\0')
    .update(edgeTexts.join('\0'))
    .update('\0')
    .update(populationText)
    .digest('hex');
  return { specFile, spec, prompts, template, edgeLists, ...(population ? { population } : {}), runs, out, fingerprint };
}
