// bench/gpu-sim: the main job on a simulated GPU cluster. N `panta serve-surrogate --cost-model` endpoints
// stand for N GPUs serving Qwen3-14B under vLLM (the cost model's prefill and decode times, a bounded KV
// cache with continuous batching and a queue, automatic prefix caching, priority scheduling, vLLM's /metrics),
// with the LLM judge on an endpoint of its own, and the distributed roles as the deploy files start them: a real
// redis-server, one scheduler, one collector, one worker pinned to each endpoint (its node-local vLLM) with the
// slots of the deploy files' four workers x 64.
// The sweep is eraclitus-shaped (examples/eraclitus.yaml): every geometry at every size eraclitus uses (mean
// fields of 64 and 256 included), 100-token answers, an LLM judge; fewer temperatures and sweeps, so that it
// runs in a few minutes here with the simulated clock sped up by --time-scale.
// Every time below is *simulated* GPU time (wall time x time scale), the cost model's, not a measurement on a
// GPU: bench/NOTES.md cites the published figures the model is built from.
// It prints: requests abandoned (the client gave up) or retried (sent more than once); each endpoint's KV-busy
// share until the critical path is all that is left; the prefix-cache hit rate; the makespan against its lower
// bound max(total GPU time / endpoints, critical path); `panta plan --gpu`'s GPU-hours against the simulated
// ones. It ends with one JSON line: abandoned, retried, kv_busy (kv_high: by the 90% threshold alone),
// prefix_hit_rate, makespan_over_bound, plan_error.
// Run after a build: node bench/gpu-sim.mjs [--quick] [--endpoints N] [--time-scale X] [--temperatures K]
//   [--trials T] [--cost-model NAME|FILE] [--hop-trace]   (--help lists them)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchArgs, int, num } from './lib/args.mjs';
import { hopSegments, hopTable, readTraces } from './lib/hops.mjs';
import { cli, logLine, proc, root, started } from './lib/panta.mjs';
import { startRedis } from './lib/redis.mjs';
import { startSurrogates } from './lib/surrogate.mjs';

const upTo = (most) => (text) => {
  const n = int()(text);
  if (n > most) throw new Error(`expected an integer from 1 to ${most}`);
  return n;
};
const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  quick: { help: '2 endpoints, 3 temperatures, 1 trial (each overridden by its own flag)' },
  endpoints: { help: 'simulated GPUs (serve-surrogate endpoints)', value: int(), shownDefault: '16, --quick 2' },
  temperatures: { help: 'temperatures of the sweep', value: upTo(12), shownDefault: '6, --quick 3' },
  trials: { help: 'trials per configuration', value: int(), shownDefault: '5, --quick 1' },
  'time-scale': { help: 'simulated seconds per wall-clock second', value: num(), default: 25 },
  'cost-model': { help: 'a built-in cost model or a JSON file', value: String, meta: 'NAME|FILE', default: 'h100-qwen3-14b' },
  'hop-trace': { help: "trace the roles (PANTA_HOP_TRACE) and print a chain's hop between two calls, in segments" },
});
const { quick } = flags;
const endpoints = flags.endpoints ?? (quick ? 2 : 16);
const costModel = flags['cost-model'];
// The mixture: eraclitus's geometries, its 100-token answers, its LLM judge, and its 180 mean-field-256 runs (6
// prompts x 6 temperatures x 5 trials), which are 82% of its GPU time and its critical path; one sweep instead of
// ten (every chain 257 calls long instead of 2,561) and the lattices at two sizes each, so that the events fit this
// machine. What makes the cluster's problem is kept: ~11 mean-field-256 chains per GPU, each request ~26,600
// prompt tokens, ~9 of them filling an H100's KV cache, lattice events to fill in around them.
const temperatureCount = flags.temperatures ?? (quick ? 3 : 6);
const trials = flags.trials ?? (quick ? 1 : 5);
const temperatures = [0.1, 0.4, 0.7, 1.0, 1.3, 1.6, 0.25, 0.55, 0.85, 1.15, 1.45, 1.75].slice(0, temperatureCount);
const sweeps = 1;
const sizes = { ring: [16, 64], torus2d: [16, 64], torus3d: [27, 64], meanfield: [64, 256] };
const timeScale = flags['time-scale'];
const SLOTS = 256; // the deploy files: 4 workers x 64 events per GPU

const dir = mkdtempSync(join(tmpdir(), 'panta-bench-gpu-sim-'));
let redisServer;
process.on('exit', () => {
  for (const c of started) c.kill('SIGKILL');
  redisServer?.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const serverArgs = ['--cost-model', costModel, '--scheduling-policy', 'priority', '--time-scale', String(timeScale)];
const [agents, [judge]] = await Promise.all([startSurrogates(endpoints, serverArgs), startSurrogates(1, serverArgs)]);
const redis = await startRedis(dir);
redisServer = redis.server;
// A PANTA_HOP_TRACE of the caller's keeps the traces (the bench's folder is deleted at the end).
const tracePrefix = process.env.PANTA_HOP_TRACE || join(dir, 'hops');
const admissionPrefix = join(dir, 'admission');
const env = {
  PANTA_REDIS_URL: redis.url,
  ...(flags['hop-trace'] ? { PANTA_HOP_TRACE: tracePrefix, PANTA_ADMISSION_TRACE: admissionPrefix } : {}),
};

const spec = join(dir, 'gpu-sim.yaml');
writeFileSync(
  spec,
  `name: gpu-sim
dataset: ${join(root, 'datasets/rheon6.jsonl')}
geometries: [ring, torus2d, torus3d, meanfield]
sizes:
${Object.entries(sizes)
  .map(([g, list]) => `  ${g}: [${list.join(', ')}]`)
  .join('\n')}
temperatures: [${temperatures.join(', ')}]
trials: ${trials}
sweeps: ${sweeps}
seed: 20260101
max_tokens: 100
fixed_length: true
backend:
  kind: openai
  base_url: [${agents.map((s) => `"${s.url}/v1"`).join(', ')}]
  model: surrogate-potts-v1
  server: vllm
  priority: true
  max_in_flight: ${SLOTS}
  timeout_ms: 120000
  max_context_tokens: 32768
encoders: [{name: hashing, kind: hashing, dim: 384}]
judge:
  kind: llm
  backend: {kind: openai, base_url: "${judge.url}/v1", model: surrogate-potts-v1, server: vllm, priority: true}
`,
);

// The plan's prices for this very spec, before anything runs.
const plan = JSON.parse(
  execFileSync(process.execPath, [cli, 'plan', spec, '--gpu', costModel, '--gpus', String(endpoints), '--json'], { encoding: 'utf8' }),
);
const fmt = (n, d = 0) => Number(n).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const pct = (x) => `${(100 * x).toFixed(1)}%`;
console.log(
  `gpu-sim: ${endpoints} simulated endpoints (${costModel}, priority scheduling, time x${timeScale}) + 1 for the judge, ${endpoints} workers x ${SLOTS} slots, ${availableParallelism()} cores`,
);
console.log(
  `  sweep: ${fmt(plan.runs ?? Number.NaN)} runs, ${fmt(plan.events ?? Number.NaN)} events; plan: ${fmt(plan.gpu_hours, 2)} GPU-h of agents + ${fmt(plan.judge_gpu_hours, 2)} of judge, critical path ${fmt(plan.critical_path_hours * 3600)} s, ${fmt(plan.wall_hours * 3600)} s on ${endpoints} GPUs`,
);

/** Every endpoint's counters (GET /panta/stats, the vllm block). */
const statsOf = async (list) => Promise.all(list.map((s) => s.stats()));
const vllm = (s) => s.vllm ?? {};

// The simulated clock: wall time x time scale. Sampled once a second for the KV-busy timeline.
const t0 = performance.now();
const simNow = () => ((performance.now() - t0) / 1000) * timeScale;
const samples = [];
let done = false;
const sampling = (async () => {
  while (!done) {
    await sleep(250);
    const all = await statsOf(agents);
    samples.push({
      t: simNow(),
      requests: all.reduce((a, s) => a + vllm(s).requests, 0),
      completed: all.reduce((a, s) => a + vllm(s).completed, 0),
      busy: all.reduce((a, s) => a + vllm(s).busy_gpu_s, 0),
      kvUsage: all.map((s) => vllm(s).kv_usage),
      kvBusy: all.map((s) => vllm(s).kv_busy_s ?? 0),
      kvHigh: all.map((s) => vllm(s).kv_high_s ?? 0),
      load: all.map((s) => (vllm(s).running ?? 0) + (vllm(s).waiting ?? 0)),
      waiting: all.map((s) => vllm(s).waiting ?? 0),
      running: all.map((s) => vllm(s).running ?? 0),
    });
    if (samples.length % 60 === 0) {
      const answered = all.reduce((a, s) => a + s.completed, 0);
      process.stderr.write(`  ... ${fmt(simNow())} simulated s: ${fmt(answered)} calls answered\n`);
    }
  }
})();

const collector = proc(['collector', '--out', join(dir, 'out')], env);
const workers = agents.map((a) => proc(['worker', '--concurrency', String(SLOTS), '--base-url', `${a.url}/v1`], env));
const scheduler = proc(['scheduler', spec], env);
const early = [['collector', collector], ...workers.map((w, i) => [`worker ${i}`, w])].map(([name, p]) =>
  p.exited.then((r) => ({ name, ...r })),
);
const first = await Promise.race([scheduler.exited.then(() => undefined), Promise.race(early)]);
if (first && (first.name !== 'collector' || first.code !== 0)) {
  console.error(`gpu-sim: ${first.name} exited (code ${first.code}) before the sweep was done:\n${first.out.slice(-3000)}`);
  process.exit(1);
}
const s = await scheduler.exited;
const c = await collector.exited;
done = true;
await sampling;
for (const w of workers) w.child.kill('SIGTERM');
const stopped = await Promise.all(workers.map((w) => w.exited));
if (s.code !== 0 || c.code !== 0) {
  console.error(`gpu-sim: the sweep failed (scheduler ${s.code}, collector ${c.code}):\n${s.out.slice(-3000)}\n${c.out.slice(-3000)}`);
  process.exit(1);
}
const written = logLine(c.out, 'corpus finished').events ?? Number.NaN;
const [agentStats, [judgeStats]] = await Promise.all([statsOf(agents), statsOf([judge])]);

// Requests: every one the servers received, answered, and the events they were for.
// (The engine's own counts: the server's also count /metrics and health checks.)
const received = agentStats.reduce((a, x) => a + vllm(x).requests, 0);
const answered = agentStats.reduce((a, x) => a + vllm(x).completed, 0);
const abandoned = [...agentStats, judgeStats].reduce((a, x) => a + vllm(x).aborted, 0);
const retried = received - written;
console.log(
  `  requests: ${fmt(received)} received for ${fmt(written)} events (${fmt(retried)} sent again), ${fmt(answered)} answered, ${fmt(abandoned)} abandoned by the client; judge: ${fmt(vllm(judgeStats).requests)} received, ${fmt(vllm(judgeStats).completed)} answered`,
);

// What the roles warned of (pino's level >= 40): a request sent again has its cause among them (a lock lost, a
// job failed, a reset socket), counted by message.
const warned = new Map();
const lockGaps = [];
for (const [role, out] of [['scheduler', s.out], ['collector', c.out], ...stopped.map((w, i) => [`worker ${i}`, w.out])]) {
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (!(entry.level >= 40)) continue;
    const key = `${role.replace(/ \d+$/, '')}: ${entry.msg}${entry.err || entry.reason ? ` (${String(entry.err ?? entry.reason).slice(0, 80)})` : ''}`;
    warned.set(key, (warned.get(key) ?? 0) + 1);
    // A lost lock says how long its process went without renewing (job-taker.ts): a stall, or Redis.
    if (entry.sinceLastRenewalMs !== undefined) lockGaps.push(`${fmt(entry.sinceLastRenewalMs)} ms (lock ${fmt(entry.lockMs)} ms)`);
  }
}
const warnings = [...warned].sort((a, b) => b[1] - a[1]);
console.log(
  `  the roles' warnings: ${
    warnings.length
      ? warnings
          .slice(0, 8)
          .map(([k, n]) => `${fmt(n)} x ${k}`)
          .join('; ')
      : 'none'
  }`,
);
if (lockGaps.length) console.log(`  lost locks, the time since the renewal before each: ${lockGaps.join(', ')}`);
// Where the requests sent again came from: the scheduler's watchdog sending an event whose job was gone (its
// 'every run closed' line), a worker whose commit found the event committed after it had called the LLM (a job
// run twice), and the client's own retries.
{
  const closed = logLine(s.out, 'every run closed: the collector finishes the corpus');
  const summaries = stopped.map((w) => logLine(w.out, 'worker stopped'));
  const sum = (k) => summaries.reduce((a, w) => a + (w[k] ?? 0), 0);
  console.log(
    `  sent again, by cause: ${fmt(closed.requeued ?? Number.NaN)} events the scheduler's watchdog sent again, ${fmt(sum('calledTwice'))} calls whose commit found the event committed (run twice), ${fmt(sum('retries'))} calls the client retried`,
  );
}
// The workers' chains: events run as continuations of the one before, and chains passed on to even the load.
const chainCounts = stopped.map((w) => logLine(w.out, 'worker stopped'));
console.log(
  `  chains: ${chainCounts.map((w) => fmt(w.continued ?? 0)).join(' / ')} events run as continuations, ${chainCounts.map((w) => fmt(w.passedOn ?? 0)).join(' / ')} chains passed on (per worker)`,
);
// The makespan: from the first request an endpoint saw to the last reply (samples 250 ms of wall time apart).
const firstAt = samples.find((x) => x.requests > 0) ?? samples[0];
const lastAt = samples.find((x) => x.completed >= answered) ?? samples.at(-1);
const makespan = lastAt.t - firstAt.t;
// GPU time and the bound. The critical path is the plan's (the longest chain x its per-call time on an idle GPU).
const gpuS = agentStats.reduce((a, x) => a + (vllm(x).busy_gpu_s ?? 0), 0);
const judgeGpuS = vllm(judgeStats).busy_gpu_s ?? 0;
const critical = plan.critical_path_hours * 3600;
const bound = Math.max(gpuS / endpoints, critical);
const makespanOverBound = makespan / bound;
console.log(
  `  makespan ${fmt(makespan)} simulated s (${fmt(makespan / timeScale, 1)} s wall); bound ${fmt(bound)} s = max(GPU time ${fmt(gpuS)} s / ${endpoints}, critical path ${fmt(critical)} s): ${makespanOverBound.toFixed(3)}x (goal: at most 1.15x)`,
);

// KV-busy: the share of the time an endpoint was saturated (the engine's kv_busy_s: its KV cache could not hold
// one more request the mean size of those running, KV usage >= 90%, a request waiting, or every sequence slot
// taken) until the critical path is all that is left: until the GPU work still to do, spread over every endpoint,
// is no more than the critical path on an idle GPU (the plan's). Before it, an endpoint not saturated is time the
// cluster lost; after it, the chains' last calls leave GPUs idle whatever the scheduling. The first condition is
// what full means for the requests an endpoint serves: an H100's cache holds 8.99 mean-field-256 prompts, so 8 of
// them fill it at 89% and a ninth would be preempted. The share without it (kv_high_s) is printed beside it.
const tailAt = samples.find((x) => x.t > firstAt.t && (gpuS - x.busy) / endpoints <= critical) ?? lastAt;
const shareOf = (key) => tailAt[key].map((b, i) => (b - firstAt[key][i]) / Math.max(1e-9, tailAt.t - firstAt.t));
const kvBusy = shareOf('kvBusy');
const kvHigh = shareOf('kvHigh');
console.log(
  `  KV-busy until only the critical path was left (the first ${fmt(tailAt.t - firstAt.t)} s of ${fmt(makespan)}): ${kvBusy.map(pct).join(' ')} (goal: at least 90% each); by KV usage >= 90%, a request waiting or every slot taken alone: ${kvHigh.map(pct).join(' ')}`,
);
// The KV cache's use over the makespan, in tenths (the mean over endpoints).
const tenths = Array.from({ length: 10 }, (_, k) => {
  const from = firstAt.t + (k * makespan) / 10;
  const inside = samples.filter((x) => x.t >= from && x.t < from + makespan / 10);
  const mean = inside.reduce((a, x) => a + x.kvUsage.reduce((p, q) => p + q, 0) / x.kvUsage.length, 0) / Math.max(1, inside.length);
  return inside.length ? pct(mean) : '-';
});
console.log(`  KV usage per tenth of the makespan: ${tenths.join(' ')}`);
// Each endpoint's KV-busy share per tenth (the engine's kv_busy_s between the samples nearest each tenth's ends):
// where the time an endpoint was not saturated went (the ramp, the middle, the tail).
const at = (t) => samples.reduce((best, x) => (Math.abs(x.t - t) < Math.abs(best.t - t) ? x : best), samples[0]);
const busyTenths = agents.map((_, i) =>
  Array.from({ length: 10 }, (_, k) => {
    const [a, b] = [at(firstAt.t + (k * makespan) / 10), at(firstAt.t + ((k + 1) * makespan) / 10)];
    return b.t > a.t ? `${((100 * (b.kvBusy[i] - a.kvBusy[i])) / (b.t - a.t)).toFixed(0)}%` : '-';
  }).join(' '),
);
console.log(`  KV-busy per tenth, each endpoint: ${busyTenths.map((l, i) => `[${i}] ${l}`).join('; ')}`);
// Requests the endpoints run and hold waiting, per tenth (the mean over samples of the sum over endpoints).
const perTenth = (key) =>
  Array.from({ length: 10 }, (_, k) => {
    const from = firstAt.t + (k * makespan) / 10;
    const inside = samples.filter((x) => x.t >= from && x.t < from + makespan / 10);
    return inside.length ? (inside.reduce((a, x) => a + x[key].reduce((p, q) => p + q, 0), 0) / inside.length).toFixed(1) : '-';
  });
console.log(`  requests running per tenth (all endpoints): ${perTenth('running').join(' ')}`);
console.log(`  requests waiting at the servers per tenth: ${perTenth('waiting').join(' ')}`);

const hits = agentStats.reduce((a, x) => a + (vllm(x).prefix_hits ?? 0), 0);
const queries = agentStats.reduce((a, x) => a + (vllm(x).prefix_queries ?? 0), 0);
const prefixHitRate = queries > 0 ? hits / queries : 0;
console.log(`  prefix cache: ${fmt(hits)} of ${fmt(queries)} prompt tokens found cached (${pct(prefixHitRate)})`);

const planError = (plan.gpu_hours * 3600) / gpuS - 1;
console.log(
  `  plan: ${fmt(plan.gpu_hours * 3600)} GPU-s of agents predicted, ${fmt(gpuS)} simulated (${(100 * planError).toFixed(1)}%); judge ${fmt(plan.judge_gpu_hours * 3600)} predicted, ${fmt(judgeGpuS)} simulated`,
);
let hop;
if (flags['hop-trace']) {
  const segments = hopSegments(readTraces(tracePrefix));
  console.log(`  a mean-field chain's hop between two calls, wall-clock ms (bench/lib/hops.mjs):\n${hopTable(segments)}`);
  // The hop's share of a chain's cycle (hop + call, means): wall-clock ms of the roles' work against a call whose
  // wall time is its simulated time / the time scale, so the share grows with the time scale. On a cluster the
  // hop is some hundreds of ms against calls of tens of seconds: a few percent.
  const hopShare = segments.hop.mean / (segments.hop.mean + segments.call.mean);
  console.log(
    `  the hop: ${pct(hopShare)} of a chain's cycle (hop + call, means); ${fmt((segments.hop.mean / 1000) * timeScale, 1)} simulated s a hop against ${fmt((segments.call.mean / 1000) * timeScale, 1)} a call at x${timeScale}`,
  );
  hop = {
    p50_ms: Number(segments.hop.p50.toFixed(1)),
    p99_ms: Number(segments.hop.p99.toFixed(1)),
    share: Number(hopShare.toFixed(4)),
  };
  // The workers' admission at each metrics poll (PANTA_ADMISSION_TRACE), before the tail: what the client held
  // open against what the server held, and how often requests waited in the client while the server had room.
  const tailWall = performance.timeOrigin + t0 + ((tailAt.t - 0) / timeScale) * 1000;
  const polls = readdirSync(dir)
    .filter((n) => n.startsWith('admission.'))
    .flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n').filter(Boolean))
    .map((l) => l.split(' '))
    .map(([ms, , open, tokens, budget, limit, queued, waiting, running, kv, cap]) => ({
      ms: Number(ms),
      open: Number(open),
      tokens: Number(tokens),
      budget: Number(budget),
      limit: Number(limit),
      queued: Number(queued),
      waiting: Number(waiting),
      running: Number(running),
      kv: Number(kv),
      cap: Number(cap),
    }))
    .filter((p) => p.ms <= tailWall);
  if (polls.length > 0) {
    const mean = (f) => polls.reduce((a, p) => a + f(p), 0) / polls.length;
    const share = (f) => pct(polls.filter(f).length / polls.length);
    console.log(
      `  admission, ${fmt(polls.length)} worker polls before the tail: open tokens ${pct(mean((p) => p.tokens / p.cap))} of the cache, budget ${pct(mean((p) => p.budget / p.cap))}, server KV usage ${pct(mean((p) => p.kv))}; open ${mean((p) => p.open).toFixed(1)} requests, server running ${mean((p) => p.running).toFixed(1)} + waiting ${mean((p) => p.waiting).toFixed(1)}; requests held in the worker at ${share((p) => p.queued > 0)} of polls, of which with the server below 90% KV and none waiting ${share((p) => p.queued > 0 && p.kv < 0.9 && p.waiting === 0)}; the worker with nothing held and the server below 90% and none waiting ${share((p) => p.queued === 0 && p.kv < 0.9 && p.waiting === 0)}`,
    );
  }
}
console.log(
  JSON.stringify({
    ...(hop ? { hop } : {}),
    abandoned,
    retried,
    kv_busy: kvBusy.map((x) => Number(x.toFixed(4))),
    kv_high: kvHigh.map((x) => Number(x.toFixed(4))),
    prefix_hit_rate: Number(prefixHitRate.toFixed(4)),
    makespan_over_bound: Number(makespanOverBound.toFixed(4)),
    plan_error: Number(planError.toFixed(4)),
  }),
);

for (const sv of [agents[0], judge]) sv.stop();
await Promise.all([agents[0].exited, judge.exited]);
redis.stop();
rmSync(dir, { recursive: true, force: true });
