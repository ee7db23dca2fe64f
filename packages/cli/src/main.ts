import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { InputError, parseShard, type Shard } from '@panta/core';
import { EXIT, reportError } from './errors.js';
import { httpUrl, httpUrls, intIn, numberIn, onceOnly, path, port, specValue, timerMs } from './option-values.js';

/** The package's version (`panta --version`). */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** setTimeout holds at most 2^31 - 1 ms; a longer latency would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** `--shard I/N`, held to core's parser, its message in the same words as every option value's. */
function shardValue(value: string): Shard {
  try {
    return parseShard(value);
  } catch (e) {
    if (e instanceof InputError) throw new InvalidArgumentError(`${e.problem}; fix: ${e.fix}`);
    throw e;
  }
}

/** `--fp`: a share in (0, 1]. */
function shareAbove0(value: string): number {
  const n = numberIn(0, 1)(value);
  if (n === 0) throw new InvalidArgumentError(`${value} is not above 0; fix: use a share such as 0.02`);
  return n;
}

/** Sets the process's exit code from a command's result. */
type SetExit = (code: number) => void;

// Options several commands share.
const metricsPortOption = [
  '--metrics-port <p>',
  'serve Prometheus metrics of this process at http://HOST:P/metrics (0: any free port)',
  port,
] as const;
const metricsHostOption = ['--metrics-host <h>', 'interface the metrics are served on', '127.0.0.1'] as const;

const redisOption = ['--redis <url>', 'Redis URL (default: $PANTA_REDIS_URL, else redis://127.0.0.1:6379)'] as const;
const logOption = () =>
  new Option('--log-level <level>', 'JSON log on stderr: debug, info, warn, error, silent').choices(LOG_LEVELS).default('info');

/** The `panta` command: a thin layer over the programmatic API, heavy modules imported lazily. */
export function buildProgram(setExit: SetExit): Command {
  const program = new Command('panta')
    .description('Populations of interacting LLM agents on interaction graphs: exact dynamics, order parameters, Parquet corpora.')
    .version(version(), '-V, --version', 'print the version')
    // A usage error is one line (see usageLine), not commander's message followed by the whole help.
    .configureOutput({ outputError: () => undefined })
    // Every study registers its scenario, tables and judge calls, so that every command knows every study: loaded
    // before a command's action runs, not for --help, --version or a usage error (most of the library, with
    // DuckDB's bindings). By its package name, as the tests' setup file imports it: one module, registered once
    // (a path to its dist/ made a second copy of it in a process that had loaded the package already).
    .hook('preAction', async () => {
      await import('@panta/studies');
    });
  // Commands in the order `panta --help` lists them.
  addRunCommand(program, setExit);
  addPlanCommand(program, setExit);
  addSchedulerCommand(program, setExit);
  addWorkerCommand(program, setExit);
  addCollectorCommand(program, setExit);
  addStatusCommand(program, setExit);
  addDashboardCommand(program, setExit);
  addMergeCommand(program, setExit);
  addEmbedCommand(program, setExit);
  addJudgeCommand(program, setExit);
  addVerifyCommand(program, setExit);
  addPhaseCommand(program, setExit);
  addPublishCommand(program, setExit);
  addReportCommand(program, setExit);
  addCalibrateTauCommand(program, setExit);
  addAnnotateCommand(program, setExit);
  addServeSurrogateCommand(program, setExit);
  addModelsCommand(program, setExit);
  addSchemaCommand(program, setExit);
  return program;
}

function addRunCommand(program: Command, setExit: SetExit): void {
  program
    .command('run')
    .description('run a sweep embedded (one process), or resume the partial corpus in its output folder')
    .argument('<spec>', 'sweep spec (YAML)')
    .option('--out <dir>', "output folder (default: the spec's out, else runs/<name>)", path)
    .option('--concurrency <n>', 'events in flight at once (1 to 65536, as in the spec)', specValue('concurrency'))
    .option('--seed <s>', 'sweep seed (overrides the spec)', specValue('seed'))
    .option(
      '--shard <i/n>',
      "job arrays: run part I of N of the grid's runs (balanced by planned GPU time) into a partial corpus (default --out: the spec's out + .part-I-of-N); panta merge joins the N parts",
      shardValue,
    )
    .option('--force', 'write into an --out that is not empty and holds no Panta corpus (refused without it)')
    .addOption(
      new Option('--log-level <level>', 'level of the JSON log in <out>/log.jsonl: debug (every retry), info, warn, error, silent')
        .choices(LOG_LEVELS)
        .default('info'),
    )
    .option(...metricsPortOption)
    .option(...metricsHostOption)
    .action(
      async (
        spec: string,
        opts: {
          out?: string;
          concurrency?: number;
          seed?: number;
          shard?: Shard;
          force?: boolean;
          logLevel?: string;
          metricsPort?: number;
          metricsHost?: string;
        },
      ) => {
        const { runCommand } = await import('./commands/run.js');
        setExit(await runCommand(spec, opts));
      },
    );
}

function addPlanCommand(program: Command, setExit: SetExit): void {
  program
    .command('plan')
    .description(
      'print what a sweep will cost before anything runs: configurations, runs, events, LLM calls by kind, estimated tokens, time at a call rate',
    )
    .argument('<spec>', 'sweep spec (YAML)')
    .option('--calls-per-s <r>', 'calls per second the servers sustain, for the time (default 10)', numberIn(0.001, 1e9))
    .option('--json', 'print the plan as JSON, for scripts')
    .option('--gpu <name-or-file>', 'price GPU time under a cost model: h100-qwen3-14b, h200-qwen3-14b, or a JSON file')
    .option('--judge-gpu <name-or-file>', "the LLM judge's server's cost model (default: --gpu's)")
    .option('--gpus <g>', 'GPUs the wall clock is given for (default 1)', intIn(1, 10_000_000))
    .action(async (spec: string, opts: { callsPerS?: number; json?: boolean; gpu?: string; judgeGpu?: string; gpus?: number }) => {
      const { planCommand } = await import('./commands/plan.js');
      setExit(planCommand(spec, opts));
    });
}

function addSchedulerCommand(program: Command, setExit: SetExit): void {
  program
    .command('scheduler')
    .description('distributed: plan a sweep, publish it to Redis and feed its events to the workers; exits 0 once every event is written')
    .argument('<spec>', 'sweep spec (YAML)')
    .option(...redisOption)
    .option('--out <dir>', "output folder the collector writes (default: the spec's out, else runs/<name>)", path)
    .option(
      '--concurrency <n>',
      'events queued or in flight at once, over all workers (1 to 65536, as in the spec)',
      specValue('concurrency'),
    )
    .option('--seed <s>', 'sweep seed (overrides the spec)', specValue('seed'))
    .option('--watch-ms <ms>', "after this long in flight, check that an event's job still exists", timerMs)
    .option(
      '--collectors <k>',
      'split the runs over K collector processes, started with --shard 1/K to --shard K/K (1 to 64; default 1)',
      intIn(1, 64),
    )
    .addOption(logOption())
    .option(...metricsPortOption)
    .option(...metricsHostOption)
    .action(async (spec: string, opts: Record<string, never>) => {
      const { schedulerCommand } = await import('./commands/cluster.js');
      setExit(await schedulerCommand(spec, opts));
    });
}

function addWorkerCommand(program: Command, setExit: SetExit): void {
  program
    .command('worker')
    .description('distributed: serve events (call the model, embed, commit) until SIGTERM, then finish what it holds')
    .option(...redisOption)
    .option('--concurrency <n>', 'events at once in this worker (1 to 65536, as in the spec)', specValue('concurrency'), 16)
    .option(
      '--base-url <urls>',
      "the model endpoint(s) to call instead of the spec's, comma-separated to balance over several (e.g. a node's vLLM engines; default: $PANTA_BASE_URL)",
      httpUrls,
    )
    .option('--lock-ms <ms>', "a killed worker's events go back to the queue after about this long", timerMs)
    .option(
      '--wait-endpoint <s>',
      "seconds to wait for the model endpoint to answer before running a sweep's events (a model loading); past it the worker exits 1 (0: no wait)",
      intIn(0, 86_400),
      600,
    )
    .addOption(logOption())
    .option(...metricsPortOption)
    .option(...metricsHostOption)
    .action(async (opts: Record<string, never>) => {
      const { workerCommand } = await import('./commands/cluster.js');
      setExit(await workerCommand(opts));
    });
}

function addCollectorCommand(program: Command, setExit: SetExit): void {
  program
    .command('collector')
    .description('distributed: judge, write the Parquet corpus, compute order parameters; exits 0 once the corpus is complete')
    .option(...redisOption)
    .option('--out <dir>', 'output folder (default: the one the scheduler was given)', path)
    .option('--sweep <id>', 'which sweep, when Redis holds more than one unfinished')
    .option(
      '--shard <i/k|auto>',
      'write the runs of shard I of K, I from 1 (the scheduler was started with --collectors K); auto: the first shard no other collector holds (K replicas of one service)',
      (v: string) => (v === 'auto' ? ('auto' as const) : shardValue(v)),
    )
    .option('--base-url <url>', "the LLM judge's endpoint instead of the spec's (e.g. the head node's vLLM)", httpUrl)
    .option(
      '--durable-ms <ms>',
      'the longest appended rows wait to be made durable, their results in Redis until then (default 60000); a run whose waiting results fill a part (4 MiB) goes sooner, and the largest runs go first while all runs together hold more than 256 MiB',
      timerMs,
    )
    .option(
      '--wait-endpoint <s>',
      "seconds to wait for an LLM judge's endpoint to answer before collecting; past it the collector exits 1 (0: no wait)",
      intIn(0, 86_400),
      600,
    )
    .addOption(logOption())
    .action(async (opts: Record<string, never>) => {
      const { collectorCommand } = await import('./commands/cluster.js');
      setExit(await collectorCommand(opts));
    });
}

function addStatusCommand(program: Command, setExit: SetExit): void {
  program
    .command('status')
    .description('distributed: progress of every sweep in Redis (per run: written, in flight), throughput, queue depth')
    .option(...redisOption)
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { redis?: string; json?: boolean }) => {
      const { statusCommand } = await import('./commands/status.js');
      setExit(await statusCommand(opts));
    });
}

function addDashboardCommand(program: Command, setExit: SetExit): void {
  program
    .command('dashboard')
    .description(
      'a live web page of a sweep: progress, throughput, calls in flight, retries, failed runs, order-parameter curves; Prometheus metrics at /metrics',
    )
    .option(
      '--redis <url>',
      'watch the distributed sweeps in this Redis (default when --corpus is not given: $PANTA_REDIS_URL, else redis://127.0.0.1:6379)',
    )
    .option(
      '--corpus <dir>',
      'watch the corpus folder a sweep writes (`panta run` or the collector); with --redis: draw the curves from it',
    )
    .option('--port <p>', 'port (0: any free port, printed on start)', port, 8080)
    .option('--host <h>', 'interface to bind (0.0.0.0: every interface)', '127.0.0.1')
    .option(
      '--allowed-hosts <names>',
      "host names the page answers to besides localhost, IP addresses and --host (comma-separated, e.g. a reverse proxy's); others get 403",
    )
    .action(async (opts: { redis?: string; corpus?: string; port: number; host: string; allowedHosts?: string }) => {
      const { dashboardCommand } = await import('./commands/dashboard.js');
      setExit(await dashboardCommand(opts));
    });
}

function addMergeCommand(program: Command, setExit: SetExit): void {
  program
    .command('merge')
    .description(
      'job arrays: join the N parts that panta run --shard I/N wrote into one corpus (whitening pooled over every part, order parameters, runs.parquet, manifest), equal to one panta run of the spec',
    )
    .argument('<out>', 'folder of the merged corpus (new, or empty)')
    .argument('<parts...>', "the parts' folders, all N of them, in any order")
    .action(async (out: string, parts: string[]) => {
      const { mergeCommand } = await import('./commands/merge.js');
      setExit(await mergeCommand(out, parts));
    });
}

function addEmbedCommand(program: Command, setExit: SetExit): void {
  program
    .command('embed')
    .description(
      'add an encoder to a finished corpus, no agent call made again: an emb_<name> column in every shard (atomic, resumable), its whitening and order-parameter rows, the manifest',
    )
    .argument('<corpus>', 'corpus folder')
    .requiredOption(
      '--encoder <name:kind:path>',
      "NAME:hashing:DIM or NAME:onnx:MODEL_FOLDER, as a spec's encoder; repeat it to add several, one pass each in order",
      (value: string, previous?: string[]) => [...(previous ?? []), value],
    )
    .option('--replace', 'recompute the column of an encoder a previous panta embed added')
    .action(async (dir: string, opts: { encoder: string[]; replace?: boolean }) => {
      const { embedCommand } = await import('./commands/embed.js');
      setExit(await embedCommand(dir, opts));
    });
}

function addJudgeCommand(program: Command, setExit: SetExit): void {
  program
    .command('judge')
    .description(
      "re-tag every answer of a finished corpus with another judge, keeping the sweep's tags: a tag_<name> column in every shard (atomic, resumable, verdicts cached), the judge's order parameters and runs.parquet under judges/<name>/",
    )
    .argument('<corpus>', 'corpus folder')
    .requiredOption(
      '--judge <spec-or-file>',
      'a judge block ({kind: llm, backend: {...}}), a file holding one, or a sweep spec whose judge is used',
      onceOnly('run panta judge once per judge'),
    )
    .option('--name <name>', "the judge's name in the corpus (default: its model's)", onceOnly('give one --name'))
    .option('--replace', 'redo a judge a previous panta judge added under this name')
    .option('--concurrency <n>', 'verdicts asked at once (default 64)', intIn(1, 100_000))
    .action(async (dir: string, opts: { judge: string; name?: string; replace?: boolean; concurrency?: number }) => {
      const { judgeCommand } = await import('./commands/judge.js');
      setExit(await judgeCommand(dir, opts));
    });
}

function addVerifyCommand(program: Command, setExit: SetExit): void {
  program
    .command('verify')
    .description('check that a corpus is complete and consistent (exit 0), or say what is wrong (exit 1)')
    .argument('<dir>', 'corpus folder')
    .action(async (dir: string) => {
      const { verifyCommand } = await import('./commands/verify.js');
      setExit(await verifyCommand(dir));
    });
}

function addPhaseCommand(program: Command, setExit: SetExit): void {
  program
    .command('phase')
    .description(
      'transition temperatures (Binder crossings between sizes, susceptibility peaks) and the rho-minimising T*, per geometry, with intervals',
    )
    .argument('<dir>', 'corpus folder')
    .option('--json', 'print one JSON object instead of text')
    .action(async (dir: string, opts: { json?: boolean }) => {
      const { phaseCommand } = await import('./commands/phase.js');
      setExit(await phaseCommand(dir, opts));
    });
}

function addPublishCommand(program: Command, setExit: SetExit): void {
  program
    .command('publish')
    .description('publish a corpus as a dataset: data/<table>/*.parquet, a dataset card (README.md) and croissant.json; or --check one')
    .argument('<dir>', 'corpus folder (with --check: a published folder)')
    .option('--out <dir>', 'the new folder to publish into (must not exist or be empty)', path)
    .option('--licence <id>', 'licence id of the card (Hub ids: cc-by-4.0, mit, apache-2.0, ...)', 'cc-by-4.0')
    .option('--title <text>', "the dataset's pretty name (default: the sweep's name)")
    .option('--authors <names>', 'authors, comma-separated')
    .option('--without-embeddings', 'leave out the emb_* columns and the whitening table (most of the bytes)')
    .option('--judge <name>', "put forward a post-hoc judge's tags (panta judge --name) instead of the sweep judge's")
    .option('--check', 'check a published folder: card header, Croissant fields, checksums, configs DuckDB reads')
    .action(
      async (
        dir: string,
        opts: { out?: string; licence?: string; title?: string; authors?: string; withoutEmbeddings?: boolean; check?: boolean },
      ) => {
        const { publishCommand } = await import('./commands/publish.js');
        setExit(await publishCommand(dir, opts));
      },
    );
}

function addReportCommand(program: Command, setExit: SetExit): void {
  program
    .command('report')
    .description('write an HTML report of a corpus: figures (SVG and PNG) and tables in <dir>/report/index.html, one self-contained file')
    .argument('<dir>', 'corpus folder')
    .option('--out <dir>', 'report folder (default: <dir>/report)', path)
    .option(
      '--exclude-prompts <ids>',
      "prompts left out of Table 9 and the main text's pooled figures and tables, comma-separated (the paper leaves out its Prompt 1: fq117 of rheon6); Table 7's pooled column, Table 10 and per-prompt rows keep them",
      (v: string) =>
        v
          .split(',')
          .map((x) => x.trim())
          .filter((x) => x !== ''),
    )
    .option('--compare <dirs...>', 'corpora compared with this one: warns when their whitenings differ (m and q not comparable)')
    .option(
      '--judge <name>',
      "draw tags, rho, FOCUS and drift from a post-hoc judge's tables (panta judge --name) instead of the sweep judge's",
    )
    .addOption(
      new Option(
        '--spread <kind>',
        "the spread over trials of Figure 6's band and the truncation table: sd (one standard deviation, the paper's) or se (one standard error)",
      )
        .choices(['sd', 'se'])
        .default('sd'),
    )
    .action(
      async (dir: string, opts: { out?: string; excludePrompts?: string[]; compare?: string[]; judge?: string; spread?: 'sd' | 'se' }) => {
        const { reportCommand } = await import('./commands/report.js');
        setExit(await reportCommand(dir, opts));
      },
    );
}

function addCalibrateTauCommand(program: Command, setExit: SetExit): void {
  program
    .command('calibrate-tau')
    .description(
      "ssvp's tau from a corpus's no-sync arm: the lowest tau whose false-positive share (updates whose CDS exceeds it) is below --fp, with the shares around it; kept per arm in <dir>/tau-calibration.json for ssvp: {tau: {calibrate: FP, from: DIR, arm: ARM}}",
    )
    .argument('<dir>', 'corpus folder with a no-sync arm')
    .option('--fp <share>', 'the false-positive bound, above 0 and at most 1 (the paper: 0.02)', shareAbove0, 0.02)
    .option('--arm <protocol>', "the arm whose updates are the observations (other arms' calibrations in the file are kept)", 'no-sync')
    .action(async (dir: string, opts: { fp: number; arm: string }) => {
      const { calibrateTauCommand } = await import('./commands/calibrate-tau.js');
      setExit(await calibrateTauCommand(dir, opts));
    });
}

function addAnnotateCommand(program: Command, setExit: SetExit): void {
  const annotate = program
    .command('annotate')
    .description("human validation of the judge (the paper's Appendix C): export a blind sample, score annotators' labels");
  annotate
    .command('export')
    .description('write a stratified, seeded, blind sample of answers as CSV for annotators (every configuration, rare tags oversampled)')
    .argument('<dir>', 'corpus folder')
    .requiredOption('--n <count>', 'answers in the sample (the paper: 1063)', intIn(1, 10_000_000))
    .option('--seed <s>', "sampling seed (default: the corpus's seed)", intIn(0, Number.MAX_SAFE_INTEGER))
    .option('--out <file>', 'CSV to write, never overwritten (default: annotation-sample.csv)', path)
    .option('--judge <name>', "stratify on a post-hoc judge's tags (panta judge --name) rather than the sweep's judge")
    .action(async (dir: string, opts: { n: number; seed?: number; out?: string; judge?: string }) => {
      const { annotateExportCommand } = await import('./commands/annotate.js');
      setExit(await annotateExportCommand(dir, opts));
    });
  annotate
    .command('score')
    .description(
      "agreement and Cohen's kappa: the judge vs each annotator and annotators pairwise, pooled and per prompt; written to the corpus for panta report",
    )
    .argument('<dir>', 'corpus folder')
    .argument('<files...>', "annotators' CSVs (the exported sample, label column filled)")
    .action(async (dir: string, files: string[]) => {
      const { annotateScoreCommand } = await import('./commands/annotate.js');
      setExit(await annotateScoreCommand(dir, files));
    });
}

function addServeSurrogateCommand(program: Command, setExit: SetExit): void {
  program
    .command('serve-surrogate')
    .description(
      'serve the surrogate agent over HTTP: OpenAI-compatible (/v1/chat/completions, /v1/models) and Anthropic-compatible (/v1/messages)',
    )
    .option('--port <p>', 'port (0: any free port, printed on start)', port, 8000)
    .option('--host <h>', 'interface to bind', '127.0.0.1')
    .option(
      '--endpoints <n>',
      'endpoints served by this one process, each with its own port, slots and counters (ports --port, --port + 1, ...; any free ones with --port 0)',
      intIn(1, 1024),
      1,
    )
    .option('--dataset <file>', 'prompt set the agent knows (JSON lines)', 'datasets/rheon6.jsonl')
    .option(
      '--template <name|file,...>',
      "prompt templates the clients render, comma-separated (a sweep's template arms): built-in names (rheon-a2, panta-v1, rheon-a2-prefix) or template files (default: every built-in)",
    )
    .option('--model <name>', 'model name served', 'surrogate-potts-v1')
    .option(
      '--scenario <name>',
      "the scenario model it plays, as a spec's backend.scenario (neutral: none; default: the one each call recognises)",
    )
    .option('--latency-ms <ms>', 'fixed latency per call', numberIn(0, MAX_TIMER_MS), 0)
    .option('--slots <c>', 'continuous batching: concurrent sequences (0: unlimited, fixed latency only)', intIn(0, 1_048_576), 0)
    .option('--token-ms <ms>', 'continuous batching: time per generated token at batch size 1', numberIn(0, MAX_TIMER_MS), 0)
    .option('--batch-slowdown <x>', 'continuous batching: per-token time grows by this factor per running sequence', numberIn(0, 1_000), 0)
    .option('--fault-rate <r>', 'share of requests that fail (0..1)', numberIn(0, 1), 0)
    .option('--faults <kinds>', 'comma-separated: 429,500,503,timeout,reset,malformed,empty', '429,500,503,timeout,reset,malformed,empty')
    .option('--fault-seed <s>', 'seed of the fault injector', intIn(0, Number.MAX_SAFE_INTEGER), 0)
    .option(
      '--cost-model <name|file>',
      "a simulated vLLM endpoint: reply after the time a GPU cost model takes (built-ins h100-qwen3-14b, h200-qwen3-14b, or a JSON file over one), queued, batched and prefix-cached as vLLM's scheduler does; /metrics in vLLM's names",
    )
    .option('--time-scale <x>', 'with --cost-model: simulated seconds per wall second', numberIn(1e-6, 1e9), 1)
    .addOption(
      new Option(
        '--scheduling-policy <p>',
        "with --cost-model: vLLM's --scheduling-policy (priority: a request's `priority` field, lower first)",
      )
        .choices(['fcfs', 'priority'])
        .default('fcfs'),
    )
    .action(async (opts: Record<string, unknown>) => {
      const { serveSurrogateCommand } = await import('./commands/serve-surrogate.js');
      setExit(await serveSurrogateCommand(opts));
    });
}

function addModelsCommand(program: Command, setExit: SetExit): void {
  const models = program
    .command('models')
    .description('where to get sentence encoders (the four of the paper) and how to use them; `models check DIR` validates a folder')
    .action(async () => {
      const { modelsCommand } = await import('./commands/models.js');
      setExit(modelsCommand());
    });
  models
    .command('check')
    .description('validate a sentence-transformers ONNX folder: files, inputs and outputs, tokenizer, one sentence embedded')
    .argument('<dir>', 'model folder')
    .option('--threads <n>', 'onnxruntime intra-op threads', intIn(1, 1024))
    .addOption(new Option('--device <d>', 'cpu or cuda').choices(['cpu', 'cuda']).default('cpu'))
    .action(async (dir: string, opts: { threads?: number; device?: string }) => {
      const { modelsCheckCommand } = await import('./commands/models.js');
      setExit(await modelsCheckCommand(dir, opts as never));
    });
}

function addSchemaCommand(program: Command, setExit: SetExit): void {
  program
    .command('schema')
    .description('print the JSON Schema of sweep specs (for editor completion)')
    .action(async () => {
      const { schemaCommand } = await import('./commands/schema.js');
      setExit(schemaCommand());
    });
}

/** Every command of the program, itself included, with its full name (`panta models check`). */
function commandsOf(command: Command, prefix = ''): { command: Command; name: string }[] {
  const name = prefix ? `${prefix} ${command.name()}` : command.name();
  return [{ command, name }, ...command.commands.flatMap((c) => commandsOf(c, name))];
}

/**
 * A usage error as one line and a pointer to the help: `panta: run: missing argument <spec>; see panta run
 * --help`. A bad option value reads like a bad spec value: `panta: run: --concurrency: 0 is too small ...`.
 */
function usageLine(error: CommanderError, name: string): string {
  const where = name.replace(/^panta ?/, '');
  const prefix = `panta: ${where ? `${where}: ` : ''}`;
  const text = error.message
    .replace(/^error: /, '')
    .replace(/\s*\n\s*/g, ' ')
    .replace('(Did you mean', '(did you mean');
  const invalid = /^option '(-[^ ',]+)(?:, (--?[^ ']+))?[^']*' argument '(.*)' is invalid\. (.*)$/s.exec(text);
  if (invalid) {
    const flag = invalid[2] ?? invalid[1];
    const why = invalid[4];
    const choices = /^Allowed choices are (.*)\.$/.exec(why);
    if (choices) return `${prefix}${flag}: "${invalid[3]}" is not allowed; fix: use one of ${choices[1]}`;
    return `${prefix}${flag}: ${/; fix: /.test(why) ? why : `"${invalid[3]}": ${why}; see ${name} --help`}`;
  }
  const noValue = /^option '(-[^ ',]+)(?:, (--?[^ ']+))? (<[^>]*>)' argument missing$/.exec(text);
  if (noValue) return `${prefix}${noValue[2] ?? noValue[1]}: missing value ${noValue[3]}; see ${name} --help`;
  const missing = /^missing required argument '(.*)'$/.exec(text);
  const problem = missing ? `missing argument <${missing[1]}>` : text.replace(/\.$/, '');
  return `${prefix}${problem}; see ${name} --help`;
}

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** A stream's write that hands the text to `sink` (and calls a write callback, as a stream would). */
function capture(sink: (text: string) => void): typeof process.stdout.write {
  return ((chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => {
    sink(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
    return true;
  }) as typeof process.stdout.write;
}

/**
 * Runs `panta ARGS...` in this process and returns its exit code: 0 done, 1 failed, 2 bad input (nothing
 * written), 130 interrupted. With `io`, what the command writes to stdout and stderr goes there instead
 * (the commands write to the process's streams, so they are swapped for the call: one call at a time).
 */
export async function runCli(args: readonly string[], io?: CliIo): Promise<number> {
  if (!io) return runArgs(args);
  const { stdout, stderr } = process;
  const [writeOut, writeErr] = [stdout.write, stderr.write];
  stdout.write = capture((t) => io.stdout(t));
  stderr.write = capture((t) => io.stderr(t));
  try {
    return await runArgs(args);
  } finally {
    stdout.write = writeOut;
    stderr.write = writeErr;
  }
}

async function runArgs(args: readonly string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => {
    code = c;
  });
  for (const { command, name } of commandsOf(program)) {
    command.exitOverride((error) => {
      throw Object.assign(error, { commandName: name });
    });
  }
  try {
    await program.parseAsync([...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; anything else commander refuses is a usage error: bad input.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT.ok;
      process.stderr.write(`${usageLine(error, (error as CommanderError & { commandName?: string }).commandName ?? 'panta')}\n`);
      return EXIT.badInput;
    }
    return reportError(error);
  }
  return code;
}

/** The `panta` binary: `argv` as Node gives it (the node binary and the script first). */
export async function main(argv: string[]): Promise<number> {
  return runCli(argv.slice(2));
}
