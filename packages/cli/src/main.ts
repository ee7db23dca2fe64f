import { Command, InvalidArgumentError } from 'commander';
import { EXIT, reportError } from './errors.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function seedValue(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

function portValue(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected a port from 0 (any free one) to 65535');
  return n;
}

/** The `panta` command: a thin layer over the programmatic API, heavy modules imported lazily. */
export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('panta')
    .description('Populations of interacting LLM agents on interaction graphs: exact dynamics, order parameters, Parquet corpora.')
    .showHelpAfterError()
    .exitOverride();

  const metricsPortOption = ['--metrics-port <p>', 'serve Prometheus metrics of this process at http://HOST:P/metrics (0: any free port)', portValue] as const;
  const metricsHostOption = ['--metrics-host <h>', 'interface the metrics are served on', '127.0.0.1'] as const;

  program
    .command('run')
    .description('run a sweep embedded (one process), or resume the partial corpus in its output folder')
    .argument('<spec>', 'sweep spec (YAML)')
    .option('--out <dir>', 'output folder (default: the spec\'s out, else runs/<name>)')
    .option('--concurrency <n>', 'events in flight at once', positiveInt)
    .option('--seed <s>', 'sweep seed (overrides the spec)', seedValue)
    .option('--log-level <level>', 'level of the JSON log in <out>/log.jsonl: debug (every retry), info, warn, error, silent', 'info')
    .option(...metricsPortOption)
    .option(...metricsHostOption)
    .action(async (spec: string, opts: { out?: string; concurrency?: number; seed?: number; logLevel?: string; metricsPort?: number; metricsHost?: string }) => {
      const { runCommand } = await import('./commands/run.js');
      setExit(await runCommand(spec, opts));
    });

  const redisOption = ['--redis <url>', 'Redis URL (default: $PANTA_REDIS_URL, else redis://127.0.0.1:6379)'] as const;
  const logOption = ['--log-level <level>', 'JSON log on stderr: debug, info, warn, error, silent', 'info'] as const;

  program
    .command('scheduler')
    .description('distributed: plan a sweep, publish it to Redis and feed its events to the workers; exits 0 once every event is written')
    .argument('<spec>', 'sweep spec (YAML)')
    .option(...redisOption)
    .option('--out <dir>', 'output folder the collector writes (default: the spec\'s out, else runs/<name>)')
    .option('--concurrency <n>', 'events queued or in flight at once, over all workers', positiveInt)
    .option('--seed <s>', 'sweep seed (overrides the spec)', seedValue)
    .option('--watch-ms <ms>', 'after this long in flight, check that an event\'s job still exists', positiveInt)
    .option(...logOption)
    .option(...metricsPortOption)
    .option(...metricsHostOption)
    .action(async (spec: string, opts: Record<string, never>) => {
      const { schedulerCommand } = await import('./commands/cluster.js');
      setExit(await schedulerCommand(spec, opts));
    });

  program
    .command('worker')
    .description('distributed: serve events (call the model, embed, commit) until SIGTERM, then finish what it holds')
    .option(...redisOption)
    .option('--concurrency <n>', 'events at once in this worker', positiveInt, 16)
    .option('--base-url <url>', 'the model endpoint to call instead of the spec\'s (e.g. the node-local vLLM; default: $PANTA_BASE_URL)')
    .option('--lock-ms <ms>', 'a killed worker\'s events go back to the queue after about this long', positiveInt)
    .option(...logOption)
    .option(...metricsPortOption)
    .option(...metricsHostOption)
    .action(async (opts: Record<string, never>) => {
      const { workerCommand } = await import('./commands/cluster.js');
      setExit(await workerCommand(opts));
    });

  program
    .command('collector')
    .description('distributed: judge, write the Parquet corpus, compute order parameters; exits 0 once the corpus is complete')
    .option(...redisOption)
    .option('--out <dir>', 'output folder (default: the one the scheduler was given)')
    .option('--sweep <id>', 'which sweep, when Redis holds more than one unfinished')
    .option('--base-url <url>', 'the LLM judge\'s endpoint instead of the spec\'s (e.g. the head node\'s vLLM)')
    .option('--durable-ms <ms>', 'how often appended rows are made durable (default 10000: fewer, larger parts; results stay in Redis until then)', positiveInt)
    .option(...logOption)
    .action(async (opts: Record<string, never>) => {
      const { collectorCommand } = await import('./commands/cluster.js');
      setExit(await collectorCommand(opts));
    });

  program
    .command('status')
    .description('distributed: progress of every sweep in Redis (per run: written, in flight), throughput, queue depth')
    .option(...redisOption)
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { redis?: string; json?: boolean }) => {
      const { statusCommand } = await import('./commands/status.js');
      setExit(await statusCommand(opts));
    });

  program
    .command('dashboard')
    .description('a live web page of a sweep: progress, throughput, calls in flight, retries, failed runs, order-parameter curves; Prometheus metrics at /metrics')
    .option('--redis <url>', 'watch the distributed sweeps in this Redis (default when --corpus is not given: $PANTA_REDIS_URL, else redis://127.0.0.1:6379)')
    .option('--corpus <dir>', 'watch the corpus folder a sweep writes (`panta run` or the collector); with --redis: draw the curves from it')
    .option('--port <p>', 'port (0: any free port, printed on start)', portValue, 8080)
    .option('--host <h>', 'interface to bind (0.0.0.0: every interface)', '127.0.0.1')
    .option('--allowed-hosts <names>', 'host names the page answers to besides localhost, IP addresses and --host (comma-separated, e.g. a reverse proxy\'s); others get 403')
    .action(async (opts: { redis?: string; corpus?: string; port: number; host: string; allowedHosts?: string }) => {
      const { dashboardCommand } = await import('./commands/dashboard.js');
      setExit(await dashboardCommand(opts));
    });

  program
    .command('verify')
    .description('check that a corpus is complete and consistent (exit 0), or say what is wrong (exit 1)')
    .argument('<dir>', 'corpus folder')
    .action(async (dir: string) => {
      const { verifyCommand } = await import('./commands/verify.js');
      setExit(await verifyCommand(dir));
    });

  program
    .command('report')
    .description('write an HTML report of a corpus: figures (SVG and PNG) and tables in <dir>/report/index.html, one self-contained file')
    .argument('<dir>', 'corpus folder')
    .option('--out <dir>', 'report folder (default: <dir>/report)')
    .action(async (dir: string, opts: { out?: string }) => {
      const { reportCommand } = await import('./commands/report.js');
      setExit(await reportCommand(dir, opts));
    });

  program
    .command('serve-surrogate')
    .description('serve the surrogate agent over HTTP: OpenAI-compatible (/v1/chat/completions, /v1/models) and Anthropic-compatible (/v1/messages)')
    .option('--port <p>', 'port (0: any free port, printed on start)', (v) => Number(v), 8000)
    .option('--host <h>', 'interface to bind', '127.0.0.1')
    .option('--dataset <file>', 'prompt set the agent knows (JSON lines)', 'datasets/rheon6.jsonl')
    .option('--template <file>', 'prompt template the clients render (default: the shipped one)')
    .option('--model <name>', 'model name served', 'surrogate-potts-v1')
    .option('--latency-ms <ms>', 'fixed latency per call', (v) => Number(v), 0)
    .option('--slots <c>', 'continuous batching: concurrent sequences (0: unlimited, fixed latency only)', (v) => Number(v), 0)
    .option('--token-ms <ms>', 'continuous batching: time per generated token at batch size 1', (v) => Number(v), 0)
    .option('--batch-slowdown <x>', 'continuous batching: per-token time grows by this factor per running sequence', (v) => Number(v), 0)
    .option('--fault-rate <r>', 'share of requests that fail (0..1)', (v) => Number(v), 0)
    .option('--faults <kinds>', 'comma-separated: 429,500,503,timeout,reset,malformed,empty', '429,500,503,timeout,reset,malformed,empty')
    .option('--fault-seed <s>', 'seed of the fault injector', (v) => Number(v), 0)
    .action(async (opts: Record<string, unknown>) => {
      const { serveSurrogateCommand } = await import('./commands/serve-surrogate.js');
      setExit(await serveSurrogateCommand(opts));
    });

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
    .option('--threads <n>', 'onnxruntime intra-op threads', positiveInt)
    .option('--device <d>', 'cpu or cuda', 'cpu')
    .action(async (dir: string, opts: { threads?: number; device?: string }) => {
      const { modelsCheckCommand } = await import('./commands/models.js');
      setExit(await modelsCheckCommand(dir, opts as never));
    });

  program
    .command('schema')
    .description('print the JSON Schema of sweep specs (for editor completion)')
    .action(async () => {
      const { schemaCommand } = await import('./commands/schema.js');
      setExit(schemaCommand());
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    const e = error as { code?: string; exitCode?: number };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      // Help and version exit 0; a usage error has been printed by commander and is bad input.
      return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help' ? EXIT.ok : EXIT.badInput;
    }
    return reportError(error);
  }
  return code;
}
