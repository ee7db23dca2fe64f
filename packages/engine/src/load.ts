import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  DEFAULT_TEMPLATE,
  checkBackendLimits,
  checkContextBudget,
  InputError,
  parseDataset,
  parseSweepSpec,
  parseTemplate,
  planSweep,
  selectPrompts,
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
  edgeLists: Map<string, [number, number][]>;
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

function parseEdges(text: string, file: string): [number, number][] {
  const edges: [number, number][] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) return;
    const parts = line.split(/[\s,]+/);
    const a = Number(parts[0]);
    const b = Number(parts[1]);
    if (parts.length !== 2 || !Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < 0) {
      throw new InputError(file, `line ${i + 1}`, `expected two agent indices, got ${JSON.stringify(line)}`, 'write one edge per line as "i j" with 0-based indices');
    }
    edges.push([a, b]);
  });
  return edges;
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
  const edgeLists = new Map<string, [number, number][]>();
  const edgeTexts: string[] = [];
  spec.geometries.forEach((g, i) => {
    if (g.kind !== 'edges' || edgeLists.has(g.path)) return;
    const file = resolve(base, g.path);
    const text = readInput(file, 'edge list', specPath, `geometries[${i}].path`);
    edgeLists.set(g.path, parseEdges(text, file));
    edgeTexts.push(text);
  });
  const runs = planSweep(spec, prompts, specPath, edgeLists);
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
    .digest('hex');
  return { specFile, spec, prompts, template, edgeLists, runs, out, fingerprint };
}
