import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { dirname, resolve } from 'node:path';
import {
  BUILTIN_TEMPLATES,
  builtinTemplate,
  shufflesNeighbours,
  DEFAULT_TEMPLATE,
  boundaryGate,
  hasBoundaries,
  protocolOf,
  DataflowPlanner,
  scheduleFor,
  GeometryError,
  parseEdgeFile,
  validateEdges,
  edgeListSize,
  checkSweepBounds,
  checkMemoryBudget,
  formatBytes,
  parseMemoryBudget,
  type MemoryAvailable,
  geometryLabel,
  type GeometrySpec,
  type Edge,
  checkBackendLimits,
  checkContextBudget,
  decodeUtf8,
  InputError,
  parseDataset,
  parseSweepSpec,
  resolveJudgeInFlight,
  parseTemplate,
  planSweep,
  selectPrompts,
  parsePopulation,
  SHARD_POLICY,
  sweepShardRuns,
  boundingTemperatures,
  maxTemperatureCount,
  shardWeigherFor,
  type PopulationEntry,
  type ArmFiles,
  armCount,
  populationArms,
  templateArms,
  type Shard,
  type Prompt,
  type PromptTemplate,
  type RunPlan,
  type SweepSpec,
  dynamicsArms,
  resolveBudgetRule,
  resolveTeamSolution,
  trialPromptsOf,
  resolveBoardRevisions,
} from '@panta/core';
import { checkScenario } from '@panta/llm';
import { adaptiveOf, checkAdaptive } from './adaptive-rounds.js';
import { plannerWindow } from './run-order.js';
import { resolveTau, type TauSource } from './tau-calibration.js';
import { checkWhiteningSource } from './whitening-source.js';

/** Everything a sweep needs, read and validated before anything is written. */
export interface LoadedSweep {
  specFile: string;
  spec: SweepSpec;
  prompts: Prompt[];
  /** The template of runs that carry none of their own (the spec's single template, or its first arm's). */
  template: PromptTemplate;
  edgeLists: Map<string, Edge[]>;
  /** What each template and population arm's file holds (planSweep's ArmFiles): what runs carry. */
  armFiles: ArmFiles;
  /** The runs this process writes: the grid's, or with a shard, its part of them. */
  runs: RunPlan[];
  /** A part of a job array (`panta run --shard I/N`): `runs` is its slice, and `panta merge` measures. */
  shard?: Shard;
  /** Output folder, absolute. */
  out: string;
  /** Digest of what determines the corpus (spec less out and concurrency, dataset, template, edges). */
  fingerprint: string;
  /**
   * Digests the same sweep had under an earlier reading of its spec, which a corpus written then carries: a
   * debate spec with a bare `team: {memory: all}` block, written before team.solution, kept the block.
   */
  formerFingerprints?: readonly string[];
  /** ssvp's tau taken from another corpus's calibration ({calibrate, from, arm}): which, and the number. */
  tauSource?: TauSource;
  /**
   * Adaptive temperatures: each configuration group's grid after the rounds run so far (a group absent has
   * the start grid); `runs` are the runs under them (adaptive-rounds.ts).
   */
  grids?: Map<string, number[]>;
}

export interface SweepOverrides {
  out?: string;
  concurrency?: number;
  seed?: number;
  /** Run part I of N of the grid's runs (see shardRuns); the default --out gets the suffix .part-I-of-N. */
  shard?: Shard;
  /** Write into an --out that is not empty and holds no corpus (refused otherwise). */
  force?: boolean;
}

/** Why a path cannot be read as a file, in words, or null when it can (ENOENT, EISDIR, EACCES...). */
function unreadable(file: string): string | null {
  try {
    if (statSync(file).isDirectory()) return 'is a folder, not a file';
    return null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'does not exist';
    if (code === 'ENOTDIR') return 'does not exist (a part of its path is a file, not a folder)';
    if (code === 'EACCES' || code === 'EPERM') return 'cannot be read (permission denied)';
    return `cannot be read (${code ?? (e as Error).message})`;
  }
}

/** Reads a file a spec names; a path that is missing, a folder or unreadable is the spec's field's fault. */
function readInput(file: string, what: string, fromFile: string, field: string): string {
  const problem = unreadable(file);
  if (problem) throw new InputError(fromFile, field, `${what} ${file} ${problem}`, 'correct the path (relative to the spec file)');
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new InputError(
      fromFile,
      field,
      `${what} ${file} cannot be read (${code})`,
      'correct the path (relative to the spec file), or make the file readable',
    );
  }
  return decodeUtf8(bytes, file);
}

/**
 * The template a spec's `template` value names: a built-in name (templates.ts: rheon-a2, the default, or
 * panta-v1), else a YAML file's path relative to the spec file.
 */
export function loadTemplate(ref: string | undefined, base: string, specPath: string, field: string): PromptTemplate {
  if (ref === undefined) return DEFAULT_TEMPLATE;
  const builtin = builtinTemplate(ref);
  if (builtin) return builtin;
  const file = resolve(base, ref);
  if (unreadable(file) && !/[./\\]/.test(ref)) {
    const names = Object.keys(BUILTIN_TEMPLATES).join(', ');
    throw new InputError(
      specPath,
      field,
      `"${ref}" is neither a built-in template nor a file`,
      `use one of ${names}, or the path of a template file`,
    );
  }
  return parseTemplate(readInput(file, 'template', specPath, field), file);
}

/** An edge list file, parsed and checked by core's parser; its problems become one-line input errors naming the line. */
interface EdgeFile {
  file: string;
  edges: Edge[];
  /** The 1-based line of each edge. */
  lines: number[];
}

const EDGES_FIX = 'write one undirected edge per line as "i j" with 0-based agent indices, no self-loops or repeats';

function parseEdges(text: string, file: string): EdgeFile {
  try {
    const { edges, lines } = parseEdgeFile(text, file);
    const problem = validateEdges(edges);
    if (problem) {
      // validateEdges names an edge by its position in the list: the user needs its line.
      const at = /^edge #(\d+) (.*)$/.exec(problem);
      if (at) throw new InputError(file, `line ${lines[Number(at[1])]}`, `edge ${at[2]}`, EDGES_FIX);
      throw new InputError(file, '', problem, EDGES_FIX);
    }
    return { file, edges, lines };
  } catch (e) {
    if (!(e instanceof GeometryError)) throw e;
    const at = /^.*:(\d+): (.*)$/.exec(e.message);
    throw new InputError(file, at ? `line ${at[1]}` : '', at ? at[2] : e.message, EDGES_FIX);
  }
}

/**
 * An edge list and the spec's sizes must agree: a size the spec gives for an `edges` geometry is the
 * population, so the file must name exactly agents 0..N-1 (an index past N, or a file with fewer agents
 * than N, is refused instead of running at the file's own size).
 */
function checkEdgeSizes(spec: SweepSpec, file: string, edgeFiles: ReadonlyMap<string, EdgeFile>): void {
  spec.geometries.forEach((g: GeometrySpec) => {
    if (g.kind !== 'edges') return;
    const label = geometryLabel(g);
    let sizes: number[] | undefined;
    let field = 'sizes';
    if (Array.isArray(spec.sizes)) sizes = spec.sizes;
    else {
      const key = label in spec.sizes ? label : 'edges' in spec.sizes ? 'edges' : undefined;
      if (key !== undefined) {
        sizes = spec.sizes[key];
        field = `sizes.${key}`;
      }
    }
    if (!sizes) return;
    const list = edgeFiles.get(g.path)!;
    const own = edgeListSize(list.edges);
    sizes.forEach((n, i) => {
      if (n === own) return;
      const mapHint = Array.isArray(spec.sizes)
        ? ` (give sizes as a map, e.g. {${label}: [${own}], ...}, when other geometries need other sizes)`
        : '';
      if (n < own) {
        const e = list.edges.findIndex(([u, v]) => u >= n || v >= n);
        const [u, v] = list.edges[e];
        throw new InputError(
          list.file,
          `line ${list.lines[e]}`,
          `agent ${Math.max(u, v)} is out of range for N = ${n} (${field}[${i}] in ${file})`,
          `use agent indices 0..${n - 1}, or make ${field}[${i}] ${own}, the file's number of agents${mapHint}`,
        );
      }
      throw new InputError(
        list.file,
        '',
        `names agents 0..${own - 1} only (N = ${own}), but ${field}[${i}] in ${file} is ${n}`,
        `make ${field}[${i}] ${own}${mapHint}, or add edges for agents ${own}..${n - 1}`,
      );
    });
  });
}

/**
 * Where a backend is and how it is called: settings that do not change what it answers. batch_invariant
 * says what the server guarantees, not what it computes (a resume that adds it goes on with the same corpus).
 */
const OPERATIONAL_BACKEND_KEYS = [
  'base_url',
  'api_key_env',
  'max_in_flight',
  'timeout_ms',
  'max_retries',
  'health_window',
  'max_unusable_share',
  'max_context_tokens',
  'price',
  'latency_ms',
  'batch_invariant',
  'priority',
];

function operationalFree(backend: object): object {
  return Object.fromEntries(Object.entries(backend).filter(([k]) => !OPERATIONAL_BACKEND_KEYS.includes(k)));
}

/**
 * What determines a corpus: the spec less how it is executed (concurrency, look-ahead, output folder), how it
 * is described and reported (departures, exclude_prompts) and where the model is served (endpoints, keys, limits, prices). A sweep resumes against another endpoint
 * of the same model; it refuses a corpus made by another model or grid.
 */
export function corpusIdentity(spec: SweepSpec, reading: { keepBareTeam?: boolean } = {}): object {
  const { concurrency: _c, out: _o, lookahead: _l, memory_budget: _m, departures: _d, exclude_prompts: _x, backend, judge, ...rest } = spec;
  // A built-in template's text is in the fingerprint already; its name is not, so that `template: panta-v1`
  // resumes a corpus made when that template was the default (on lattices: see the shuffle in loadSweep).
  if (typeof rest.template === 'string' && builtinTemplate(rest.template)) delete rest.template;
  // per-event is what a spec without the key gets: saying so is the same corpus.
  if (rest.neighbour_order === 'per-event') delete rest.neighbour_order;
  // every is what corpora from before trial_prompts were planned with: saying so is the same corpus.
  if (rest.trial_prompts === 'every') delete rest.trial_prompts;
  // verbatim is what debates from before team.solution were run with: saying so is the same corpus.
  // A team block that holds nothing else (memory at its default) was no block at all in such a corpus.
  if (rest.team?.solution === 'verbatim') {
    const { solution: _s, ...team } = rest.team;
    rest.team = !reading.keepBareTeam && Object.keys(team).length === 1 && team.memory === 'all' ? undefined : team;
    if (rest.team === undefined) delete rest.team;
  }
  // object is what corpora from before team.revisions were run with: saying so is the same corpus.
  if (rest.team?.revisions === 'object') {
    const { revisions: _r, ...team } = rest.team;
    rest.team = team;
  }
  // split is what relays from before team.budget_rule were run with: saying so is the same corpus.
  if (rest.team?.budget_rule === 'split') {
    const { budget_rule: _b, ...team } = rest.team;
    rest.team = team;
  }
  // vote is the decision of a team block without the key: saying so is the same corpus.
  if (rest.team?.decision === 'vote') {
    const { decision: _v, ...team } = rest.team;
    rest.team = team;
  }
  return {
    ...rest,
    backend: operationalFree(backend),
    judge: judge.kind === 'llm' ? { ...judge, backend: operationalFree(judge.backend) } : judge,
  };
}

/** A cgroup's memory limit (v2, then v1), or undefined when there is none or it cannot be read. */
function cgroupLimit(): number | undefined {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const text = readFileSync(file, 'utf8').trim();
      const bytes = Number(text);
      // v2 says "max" when unlimited, v1 a number near 2^63.
      if (Number.isSafeInteger(bytes) && bytes > 0) return bytes;
    } catch {
      // not this cgroup version, or no cgroup
    }
  }
  return undefined;
}

/**
 * The memory a sweep may use: the spec's memory_budget, else this machine's, or its cgroup's limit when
 * lower; and this process's V8 heap limit.
 */
export function memoryAvailable(spec: SweepSpec, file: string): MemoryAvailable {
  const heapBytes = getHeapStatistics().heap_size_limit;
  if (spec.memory_budget !== undefined) {
    const bytes = parseMemoryBudget(spec.memory_budget);
    if (bytes === undefined)
      throw new InputError(
        file,
        'memory_budget',
        `${JSON.stringify(spec.memory_budget)} is not a size above 0`,
        'use bytes, or a size such as "16 GiB" or "512 MB"',
      );
    return { bytes, source: `memory_budget ${formatBytes(bytes)}`, heapBytes };
  }
  const machine = totalmem();
  const cgroup = cgroupLimit();
  if (cgroup !== undefined && cgroup < machine) return { bytes: cgroup, source: `the ${formatBytes(cgroup)} its cgroup allows`, heapBytes };
  return { bytes: machine, source: `this machine's ${formatBytes(machine)}`, heapBytes };
}

/** A run's dataflow planner, starting at `startEvent` (where its durable rows end). */
export function plannerFor(
  sweep: LoadedSweep,
  run: RunPlan,
  startEvent: number,
  control?: { sweep: number; state?: { stop: boolean } },
): DataflowPlanner {
  // A run with sweep boundaries starts held at its next one, before the planner plans past it.
  const gate = hasBoundaries(run.protocol, run.controls)
    ? boundaryGate(run, control?.sweep ?? -1, control?.state?.stop ?? false)
    : Number.POSITIVE_INFINITY;
  return new DataflowPlanner(scheduleFor(run, sweep.edgeLists), plannerWindow(run, sweep.spec.lookahead), startEvent, gate);
}

/** Settings that only make sense together with others. */
function checkControls(spec: SweepSpec, file: string): void {
  const encoder = spec.ssvp.encoder;
  if (encoder && !spec.encoders.some((e) => e.name === encoder)) {
    throw new InputError(
      file,
      'ssvp.encoder',
      `"${encoder}" is not one of the sweep's encoders`,
      `use one of ${spec.encoders.map((e) => e.name).join(', ')}`,
    );
  }
  if (spec.annealing?.shape === 'geometric' && (spec.annealing.to <= 0 || boundingTemperatures(spec.temperatures).some((t) => t <= 0))) {
    throw new InputError(
      file,
      'annealing.to',
      'a geometric schedule needs positive temperatures at both ends',
      'use shape: linear, or temperatures above 0',
    );
  }
  const stop = spec.early_stopping;
  if (stop && Math.max(stop.window, stop.min_sweeps) >= spec.sweeps) {
    throw new InputError(
      file,
      'early_stopping.window',
      `a run of ${spec.sweeps} sweeps can never settle over ${Math.max(stop.window, stop.min_sweeps)} sweeps`,
      'use a smaller window and min_sweeps, or more sweeps',
    );
  }
}

export function loadSweep(specPath: string, overrides: SweepOverrides = {}): LoadedSweep {
  const specFile = resolve(specPath);
  const unusable = unreadable(specFile);
  if (unusable)
    throw new InputError(specPath, '', `the sweep spec ${unusable}`, 'give the path of a YAML sweep spec, e.g. examples/quickstart.yaml');
  const specText = readSpecText(specFile, specPath);
  const spec = parseSweepSpec(specText, specPath);
  // {calibrate, from}: the calibrated number, before anything (plan, fingerprint, manifest) reads it.
  const tauResolved = resolveTau(spec, specFile, specPath);
  spec.ssvp.tau = tauResolved.tau;
  if (overrides.out !== undefined && overrides.out.trim() === '')
    throw new InputError('--out', '', 'an empty path', 'give the output folder, e.g. --out runs/mine');
  if (overrides.concurrency !== undefined) spec.concurrency = overrides.concurrency;
  if (overrides.seed !== undefined) spec.seed = overrides.seed;
  resolveJudgeInFlight(spec); // at the concurrency the sweep runs at, --concurrency included
  const base = dirname(specFile);
  const datasetFile = resolve(base, spec.dataset);
  const datasetText = readInput(datasetFile, 'dataset', specPath, 'dataset');
  const prompts = selectPrompts(spec, parseDataset(datasetText, datasetFile), specPath);
  // The trials' layout, resolved before anything (plan, fingerprint, manifest) reads it: a corpus keeps the layout it
  // was planned with, and one whose stored spec has no key (written before it existed) was planned `every`.
  spec.trial_prompts = trialPromptsOf(spec, prompts);
  // Likewise a debate's solution extraction: extracted for a new sweep, and a stored spec without the key reads as verbatim.
  resolveTeamSolution(spec, dynamicsArms(spec));
  // The same for a board's revisions: a new sweep's are the author's own (the paper's); a stored spec without the key was run `object`.
  resolveBoardRevisions(spec, dynamicsArms(spec));
  // And a relay's token budget: pooled for a new sweep (the paper's); a stored spec without the key was split in advance.
  resolveBudgetRule(spec, dynamicsArms(spec));
  const templates = templateArms(spec).map((arm) => loadTemplate(arm.ref, base, specPath, arm.field));
  const template = templates[0];
  const { edgeLists, edgeFiles, edgeTexts } = readEdgeLists(spec, base, specPath);
  checkEdgeSizes(spec, specPath, edgeFiles);
  const { populations, populationTexts } = readPopulations(spec, base, specPath);
  const armFiles: ArmFiles = { templates, populations };
  checkControls(spec, specPath);
  // Before planning, which builds every graph: a grid too large to hold is refused, not allocated.
  checkSweepBounds(spec, prompts.length, specPath, (path) => edgeListSize(edgeLists.get(path)!));
  const protocols = (Array.isArray(spec.protocol) ? spec.protocol.length : 1) * armCount(spec);
  const runsPerSize = prompts.length * maxTemperatureCount(spec.temperatures) * protocols * spec.trials;
  checkMemoryBudget(spec, runsPerSize, specPath, (path) => edgeListSize(edgeLists.get(path)!), memoryAvailable(spec, specPath));
  const runs = planSweep(spec, prompts, specPath, edgeLists, armFiles);
  checkAdaptive(spec, runs, specPath);
  checkBackendLimits(spec, specPath);
  checkScenario(spec.backend, specPath, 'backend');
  if (spec.judge.kind === 'llm') checkScenario(spec.judge.backend, specPath, 'judge.backend');
  for (const t of new Set(templates))
    checkContextBudget(
      spec,
      runs.filter((r) => (r.template ?? template) === t),
      t,
      specPath,
    );
  // Another corpus's whitening: its prompts and encoders (and hashing dims) now; onnx dims once opened.
  const known = spec.encoders.map((e) => (e.kind === 'hashing' ? { name: e.name, dim: e.dim } : { name: e.name }));
  checkWhiteningSource(spec, specFile, specPath, prompts, known);
  // 1/1 is a part too: an array script of any size ends with the same `panta merge`.
  const shard = overrides.shard;
  const defaultOut = spec.out ?? `runs/${spec.name}`;
  const out = resolve(overrides.out ?? (shard ? `${defaultOut}.part-${shard.index}-of-${shard.count}` : defaultOut));
  const fingerprint = sweepFingerprint(spec, prompts, templates, edgeTexts, populationTexts);
  // A spec that wrote `team: {memory: all}` itself: a corpus from before team.solution kept that block.
  const kept = sweepFingerprint(spec, prompts, templates, edgeTexts, populationTexts, { keepBareTeam: true });
  // Every part plans (and checks) the whole grid, so each computes the same partition.
  const mine = shard ? sweepShardRuns(spec, runs, shard, shardWeigherFor(SHARD_POLICY, spec, edgeLists)) : runs;
  return {
    specFile,
    spec,
    prompts,
    template,
    edgeLists,
    armFiles,
    runs: mine,
    ...(shard ? { shard } : {}),
    out,
    fingerprint,
    ...(kept !== fingerprint ? { formerFingerprints: [kept] } : {}),
    ...(tauResolved.source ? { tauSource: tauResolved.source } : {}),
    ...(adaptiveOf(spec) ? { grids: new Map<string, number[]>() } : {}),
  };
}

/** The spec's text: a path that is no readable file, or bytes that are not UTF-8, are one line. */
function readSpecText(specFile: string, specPath: string): string {
  let specBytes: Buffer;
  try {
    specBytes = readFileSync(specFile);
  } catch (e) {
    throw new InputError(
      specPath,
      '',
      `the sweep spec cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      'make it readable, or give another spec',
    );
  }
  return decodeUtf8(specBytes, specPath);
}

/** The geometries' edge lists, each file read once, with their texts (for the fingerprint). */
function readEdgeLists(
  spec: SweepSpec,
  base: string,
  specPath: string,
): { edgeLists: Map<string, Edge[]>; edgeFiles: Map<string, EdgeFile>; edgeTexts: string[] } {
  const edgeLists = new Map<string, Edge[]>();
  const edgeFiles = new Map<string, EdgeFile>();
  const edgeTexts: string[] = [];
  spec.geometries.forEach((g, i) => {
    if (g.kind !== 'edges' || edgeLists.has(g.path)) return;
    const file = resolve(base, g.path);
    const text = readInput(file, 'edge list', specPath, `geometries[${i}].path`);
    const parsed = parseEdges(text, file);
    edgeFiles.set(g.path, parsed);
    edgeLists.set(g.path, parsed.edges);
    edgeTexts.push(text);
  });
  return { edgeLists, edgeFiles, edgeTexts };
}

/** Each population arm's file (undefined: none), with their texts (for the fingerprint). */
function readPopulations(
  spec: SweepSpec,
  base: string,
  specPath: string,
): { populations: (PopulationEntry[] | undefined)[]; populationTexts: string[] } {
  const populationTexts: string[] = [];
  const populations = populationArms(spec).map((arm): PopulationEntry[] | undefined => {
    if (arm.file === undefined) return undefined;
    const file = resolve(base, arm.file);
    const text = readInput(file, 'population file', specPath, arm.field);
    populationTexts.push(text);
    return parsePopulation(text, file);
  });
  return { populations, populationTexts };
}

/** What identifies the corpus a sweep writes: its determining spec, prompts, templates, edge lists and populations. */
function sweepFingerprint(
  spec: SweepSpec,
  prompts: readonly Prompt[],
  templates: readonly PromptTemplate[],
  edgeTexts: readonly string[],
  populationTexts: readonly string[],
  reading: { keepBareTeam?: boolean } = {},
): string {
  const determining = corpusIdentity(spec, reading);
  return (
    createHash('sha256')
      .update(JSON.stringify(determining))
      .update('\0')
      .update(JSON.stringify(prompts))
      .update('\0')
      // One template as ever; arms by their list (a list is a new spec anyway).
      .update(JSON.stringify(templates.length === 1 && !Array.isArray(spec.template) ? templates[0] : templates))
      .update('\0')
      .update(edgeTexts.join('\0'))
      .update('\0')
      .update(populationTexts.join('\0'))
      // Neighbours in a seeded order per event (a mean field, a star, random graphs) replaced agent order: such
      // a sweep is another corpus than one written before, and must not resume it. Lattice-only sweeps keep theirs.
      .update(spec.geometries.some(shufflesNeighbours) ? '\0neighbours shuffled per event' : '')
      // A protocol whose behaviour changed under its name (ssvp became the published protocol: summaries,
      // pairwise CDS, ContextMerge) marks its sweeps, so that a corpus of the old behaviour is not resumed by it.
      // Sweeps without such a protocol keep their fingerprint.
      .update([...new Set([spec.protocol].flat())].map((p) => protocolOf(p).fingerprint ?? '').join(''))
      .digest('hex')
  );
}
