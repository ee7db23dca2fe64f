import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  BUILTIN_TEMPLATES,
  builtinTemplate,
  DEFAULT_TEMPLATE_NAME,
  GPU_COST_MODELS,
  type GpuCostModel,
  parseDataset,
  parseGpuCostModel,
  parseTemplate,
  type Prompt,
  type PromptTemplate,
} from '@panta/core';
import { FAULT_KINDS, scenarioNames, startSurrogateServer, TOKENIZER, type FaultKind, type SurrogateServerOptions } from '@panta/llm';
import { EXIT, reportError } from '../errors.js';

/** A bad option: one line naming the option, what is wrong and the fix. */
class OptionError extends Error {
  constructor(
    readonly option: string,
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`serve-surrogate: ${option}: ${problem}; fix: ${fix}`);
  }
}

function number(
  opts: Record<string, unknown>,
  key: string,
  flag: string,
  check: (n: number) => boolean,
  expected: string,
  fix: string,
): number {
  const v = opts[key];
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isFinite(n) || !check(n))
    throw new OptionError(flag, `expected ${expected}, got ${JSON.stringify(v === undefined ? null : String(v))}`, fix);
  return n;
}

const nonNegative = (n: number) => n >= 0;
const nonNegativeInt = (n: number) => Number.isSafeInteger(n) && n >= 0;

/** Checks the options and turns them into server options (prompts and template still to load). */
export function parseServeOptions(
  opts: Record<string, unknown>,
): Omit<SurrogateServerOptions, 'prompts' | 'template'> & { endpoints: number; dataset: string; templateFile?: string } {
  const port = number(
    opts,
    'port',
    '--port',
    (n) => Number.isInteger(n) && n >= 0 && n <= 65535,
    'an integer port in 0..65535',
    'pass --port 8000, or --port 0 for any free port',
  );
  const host = typeof opts.host === 'string' && opts.host ? opts.host : '127.0.0.1';
  const endpoints = number(
    opts,
    'endpoints',
    '--endpoints',
    (n) => Number.isSafeInteger(n) && n >= 1,
    'an integer >= 1',
    'pass e.g. --endpoints 16',
  );
  if (port > 0 && port + endpoints - 1 > 65535)
    throw new OptionError(
      '--endpoints',
      `${endpoints} endpoints from port ${port} go past port 65535`,
      `pass a lower --port, or --port 0 for any free ports`,
    );
  const dataset = typeof opts.dataset === 'string' && opts.dataset ? opts.dataset : 'datasets/rheon6.jsonl';
  const templateFile = typeof opts.template === 'string' && opts.template ? opts.template : undefined;
  const model = typeof opts.model === 'string' ? opts.model : 'surrogate-potts-v1';
  if (!model.trim()) throw new OptionError('--model', 'empty model name', 'pass a name such as --model surrogate-potts-v1');
  const { latencyMs, slots, tokenMs, batchSlowdown } = parseTiming(opts);
  const faults = parseFaults(opts);
  const costModel = parseCostModel(opts, { slots, latencyMs });
  const timeScale = number(
    opts,
    'timeScale',
    '--time-scale',
    (n) => n > 0,
    'a number > 0',
    'pass e.g. --time-scale 60 (a simulated minute per second)',
  );
  const schedulingPolicy = opts.schedulingPolicy === 'priority' ? 'priority' : 'fcfs';
  // The spec's backend.scenario: a served surrogate answers as the in-process one of the same scenario.
  const scenario = typeof opts.scenario === 'string' ? opts.scenario : undefined;
  if (scenario !== undefined && !scenarioNames().includes(scenario))
    throw new OptionError('--scenario', `unknown surrogate scenario "${scenario}"`, `use one of ${scenarioNames().join(', ')}`);
  return {
    ...(scenario !== undefined ? { surrogate: { scenario } } : {}),
    ...(costModel ? { costModel, timeScale, schedulingPolicy } : {}),
    port,
    host,
    endpoints,
    dataset,
    templateFile,
    model,
    latencyMs,
    slots,
    tokenMs,
    batchSlowdown,
    faults,
  };
}

/** A fixed latency per call, or continuous batching (slots, time per token, slowdown per sequence). */
function parseTiming(opts: Record<string, unknown>): { latencyMs: number; slots: number; tokenMs: number; batchSlowdown: number } {
  const latencyMs = number(opts, 'latencyMs', '--latency-ms', nonNegative, 'a number of milliseconds >= 0', 'pass e.g. --latency-ms 50');
  const slots = number(opts, 'slots', '--slots', nonNegativeInt, 'an integer >= 0', 'pass e.g. --slots 64 (0: no batching model)');
  const tokenMs = number(opts, 'tokenMs', '--token-ms', nonNegative, 'a number of milliseconds >= 0', 'pass e.g. --token-ms 2');
  const batchSlowdown = number(opts, 'batchSlowdown', '--batch-slowdown', nonNegative, 'a number >= 0', 'pass e.g. --batch-slowdown 0.02');
  if (slots === 0 && tokenMs > 0)
    throw new OptionError(
      '--token-ms',
      'only applies to continuous batching, and --slots is 0',
      'add --slots C (e.g. --slots 64), or use --latency-ms for a fixed latency',
    );
  if (slots === 0 && batchSlowdown > 0)
    throw new OptionError(
      '--batch-slowdown',
      'only applies to continuous batching, and --slots is 0',
      'add --slots C (e.g. --slots 64) and --token-ms',
    );
  return { latencyMs, slots, tokenMs, batchSlowdown };
}

/** The fault injector: a share of requests, the kinds of fault, a seed. */
function parseFaults(opts: Record<string, unknown>): { rate: number; kinds: FaultKind[]; seed: number } {
  const rate = number(
    opts,
    'faultRate',
    '--fault-rate',
    (n) => n >= 0 && n <= 1,
    'a share in 0..1',
    'pass e.g. --fault-rate 0.2 for 20% of requests',
  );
  const faultSeed = number(opts, 'faultSeed', '--fault-seed', nonNegativeInt, 'an integer >= 0', 'pass e.g. --fault-seed 7');
  const kindsText = typeof opts.faults === 'string' ? opts.faults : FAULT_KINDS.join(',');
  const kinds = kindsText
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k);
  const unknown = kinds.find((k) => !(FAULT_KINDS as readonly string[]).includes(k));
  if (unknown !== undefined || kinds.length === 0) {
    throw new OptionError(
      '--faults',
      unknown !== undefined ? `unknown fault kind "${unknown}"` : 'no fault kind given',
      `use a comma-separated subset of ${FAULT_KINDS.join(',')}`,
    );
  }
  return { rate, kinds: [...new Set(kinds)] as FaultKind[], seed: faultSeed };
}

/** `--cost-model`: a built-in name or a JSON file; it sets the time, so --slots and --latency-ms do not apply. */
function parseCostModel(opts: Record<string, unknown>, timing: { slots: number; latencyMs: number }): GpuCostModel | undefined {
  const { slots, latencyMs } = timing;
  let costModel: GpuCostModel | undefined;
  const costRef = typeof opts.costModel === 'string' ? opts.costModel.trim() : '';
  if (costRef) {
    costModel =
      costRef in GPU_COST_MODELS
        ? parseGpuCostModel(costRef, '--cost-model')
        : parseGpuCostModel(
            readInput(costRef, '--cost-model', `a cost-model JSON file, or a built-in name (${Object.keys(GPU_COST_MODELS).join(', ')})`),
            costRef,
          );
    for (const [flag, v] of [
      ['--slots', slots],
      ['--latency-ms', latencyMs],
    ] as const)
      if (v) throw new OptionError(flag, 'does not apply with --cost-model (the cost model sets the time)', `drop ${flag}`);
  }
  return costModel;
}

function readInput(file: string, flag: string, what: string): string {
  try {
    return readFileSync(resolve(process.cwd(), file), 'utf8');
  } catch (e) {
    throw new OptionError(
      flag,
      `cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      `pass the path of ${what}, relative to the current folder`,
    );
  }
}

function describe(o: ReturnType<typeof parseServeOptions>): string | undefined {
  const parts: string[] = [];
  if (o.costModel) {
    const m = o.costModel;
    parts.push(
      `simulated vLLM: ${m.name} (${m.gpu}, ${m.model}; ${m.prefillUsPerToken} us a prompt token, ${m.decodeUsPerToken} us an output token, KV cache ${m.kvCapacityTokens} tokens; a cost model's figures, not measurements), time scale ${o.timeScale}, scheduling ${o.schedulingPolicy}, tokens by ${TOKENIZER}`,
    );
  }
  if (o.slots) {
    parts.push(
      `continuous batching: ${o.slots} slots, ${o.tokenMs} ms/token, slowdown ${o.batchSlowdown}${o.latencyMs ? `, +${o.latencyMs} ms per call` : ''}`,
    );
  } else if (o.latencyMs) parts.push(`latency ${o.latencyMs} ms per call`);
  if (o.faults && o.faults.rate > 0) parts.push(`faults: ${o.faults.rate * 100}% of ${o.faults.kinds!.join(',')} (seed ${o.faults.seed})`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/**
 * `panta serve-surrogate`: the surrogate over HTTP until SIGINT or SIGTERM. Resolves 0 once the server has
 * closed after a signal; 2 for bad options or input (nothing served).
 */
export async function serveSurrogateCommand(opts: Record<string, unknown>): Promise<number> {
  const servers: Server[] = [];
  let config: ReturnType<typeof parseServeOptions>;
  try {
    config = parseServeOptions(opts);
    const prompts = parseDataset(readInput(config.dataset, '--dataset', 'a JSON-lines prompt set'), config.dataset);
    const templates = loadTemplates(config.templateFile);
    await startEndpoints(config, prompts, templates, servers);
  } catch (error) {
    // Nothing half-served: endpoints started before the one that failed close again.
    await Promise.all(servers.map((s) => s.close()));
    if (error instanceof OptionError) {
      process.stderr.write(`panta: ${error.message}\n`);
      return EXIT.badInput;
    }
    return reportError(error);
  }
  const about = describe(config);
  if (about) process.stderr.write(`serve-surrogate: ${about}${servers.length > 1 ? ` (each of ${servers.length} endpoints)` : ''}\n`);
  for (const server of servers)
    process.stdout.write(`serve-surrogate listening on ${server.url}/v1 (model ${server.model}, ${server.promptCount} prompts)\n`);
  const signal = await untilSignal();
  await Promise.all(servers.map((s) => s.close()));
  sayStopped(servers, signal);
  return EXIT.ok;
}

type Server = Awaited<ReturnType<typeof startSurrogateServer>>;
type Templates = { template: PromptTemplate; file: string }[];

/**
 * The templates the clients render: built-in names (rheon-a2, panta-v1, rheon-a2-prefix), as a spec's
 * `template` takes, or template files, comma-separated (a sweep's template arms); none given: every built-in,
 * so a spec on any of them needs no option.
 */
function loadTemplates(templateFile: string | undefined): Templates {
  const refs = templateFile
    ? templateFile
        .split(',')
        .map((r) => r.trim())
        .filter((r) => r)
    : [DEFAULT_TEMPLATE_NAME, ...Object.keys(BUILTIN_TEMPLATES).filter((n) => n !== DEFAULT_TEMPLATE_NAME)];
  return refs.map((ref) => ({
    template: builtinTemplate(ref) ?? parseTemplate(readInput(ref, '--template', 'a prompt template (YAML)'), ref),
    file: ref,
  }));
}

/**
 * Starts the endpoints into `servers` (the caller closes those started if one fails). Several endpoints in
 * one process: a simulated cluster's servers on one machine without a Node process each (each process's own
 * runtime, collector and cold code cost more CPU per call than the calls). Each has its own port, batch and
 * counters, and its own fault seed, so their faults differ.
 */
async function startEndpoints(
  config: ReturnType<typeof parseServeOptions>,
  prompts: Prompt[],
  templates: Templates,
  servers: Server[],
): Promise<void> {
  const [first, ...more] = templates;
  const { endpoints, ...shared } = config;
  for (let i = 0; i < endpoints; i++) {
    const port = shared.port ? shared.port + i : 0;
    try {
      servers.push(
        await startSurrogateServer({
          ...shared,
          port,
          ...(shared.faults ? { faults: { ...shared.faults, seed: (shared.faults.seed ?? 0) + i } } : {}),
          prompts,
          template: first!.template,
          templateFile: first!.file,
          moreTemplates: more,
        }),
      );
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new OptionError(
          endpoints > 1 ? '--port, --endpoints' : '--port',
          `${port} is already in use on ${config.host}`,
          endpoints > 1 ? 'choose another --port, or --port 0 for any free ports' : 'choose another port, or --port 0 for any free port',
        );
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
        throw new OptionError(
          '--host',
          `cannot bind ${config.host} (${code})`,
          'pass an address of this machine, e.g. --host 127.0.0.1 or --host 0.0.0.0',
        );
      if (code === 'EACCES') throw new OptionError('--port', `not allowed to bind port ${port} (EACCES)`, 'choose a port above 1023');
      throw e;
    }
  }
}

/** Resolves with the signal, on SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise<NodeJS.Signals>((done) => {
    const stop = (s: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done(s);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** The endpoints' counts once they are closed. */
function sayStopped(servers: Server[], signal: NodeJS.Signals): void {
  const all = servers.map((s) => s.stats());
  const sum = (f: (s: (typeof all)[number]) => number) => all.reduce((a, s) => a + f(s), 0);
  const faults = sum((s) => Object.values(s.faults).reduce((a, b) => a + b, 0));
  process.stderr.write(
    `serve-surrogate: ${signal}: stopped after ${sum((s) => s.requests)} requests (${sum((s) => s.completed)} answered, ${faults} faults injected, ${sum((s) => s.badRequests)} bad, at most ${Math.max(...all.map((s) => s.maxConcurrent))} at once${servers.length > 1 ? ` on one endpoint of ${servers.length}` : ''})\n`,
  );
}
