// bench/cluster: events/s of the distributed mode (a real redis-server with AOF and appendfsync always, one
// scheduler, one collector, 1/2/4 workers, each a `panta` process) next to the embedded engine on the same
// spec, measured in one run from process start to a complete corpus:
//   A. the surrogate in process, no latency (what the coordination itself costs);
//   B. `panta serve-surrogate` with 64 slots and 20 ms per reply (20 tokens at 1 ms, fixed length), where the
//      goal is the server's saturation throughput (64 / 20 ms = 3,200 calls/s) within 10%.
// Run after a build: node bench/cluster.mjs [--quick] [--only-a | --only-b] [--pairs N]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, int } from './lib/args.mjs';
import { busyMs, proc, root } from './lib/panta.mjs';
import { startRedis } from './lib/redis.mjs';
import { startSurrogate } from './lib/surrogate.mjs';

const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  quick: { help: 'smaller sweeps (2 geometries in A, 4 sweeps in B), no alternated pairs' },
  'only-a': { help: 'part A only (the surrogate in process)' },
  'only-b': { help: 'part B only (serve-surrogate, 64 slots, 20 ms a reply)' },
  pairs: { help: 'alternated pairs of sweeps for CPU per further event', value: int(), default: 3 },
});
const { quick, pairs } = flags;
const parts = flags['only-b'] ? ['B'] : flags['only-a'] ? ['A'] : ['A', 'B'];
const dir = mkdtempSync(join(tmpdir(), 'panta-bench-cluster-'));

const { url: redisUrl, redis, cpuNow: redisCpuNow, counts: redisCounts, stop: stopRedis } = await startRedis(dir);

async function embedded(spec, name) {
  const t0 = performance.now();
  const { code, out } = await proc(['run', spec, '--out', join(dir, `${name}-embedded`)]).exited;
  if (code !== 0) throw new Error(`embedded run failed:\n${out}`);
  return (performance.now() - t0) / 1000;
}

async function distributed(spec, name, workers, workerConcurrency) {
  await redis.flushall();
  cpu.redisMark = await redisCpuNow();
  const counted = await redisCounts();
  const env = { PANTA_REDIS_URL: redisUrl };
  const t0 = performance.now();
  const collector = proc(['collector', '--out', join(dir, `${name}-w${workers}`)], env);
  const ws = Array.from({ length: workers }, () => proc(['worker', '--concurrency', String(workerConcurrency)], env));
  const scheduler = proc(['scheduler', spec], env);
  const s = await scheduler.exited;
  const c = await collector.exited;
  const wall = (performance.now() - t0) / 1000;
  for (const w of ws) w.child.kill('SIGTERM');
  const done = await Promise.all(ws.map((w) => w.exited));
  if (s.code !== 0 || c.code !== 0) throw new Error(`distributed run failed:\n${s.out}\n${c.out}`);
  const redisCpu = await redisCpuNow();
  cpu.scheduler += busyMs(s.out, 'scheduler started', 'every run closed');
  cpu.collector += busyMs(c.out, 'collector started', 'corpus finished');
  // A worker's events: from its sweep loaded (its first job imports the backend's and encoders' modules, once
  // per process) to its stop; the loading apart, in cpu.loading.
  for (const w of done) {
    cpu.workers += busyMs(w.out, 'sweep loaded', 'worker stopped');
    cpu.loading += busyMs(w.out, 'worker started', 'sweep loaded');
  }
  cpu.redis += (redisCpu - cpu.redisMark) * 1000;
  cpu.redisMark = redisCpu;
  const counts = await redisCounts();
  for (const k of ['commands', 'evals', 'input', 'rewrites', 'childrenMs', 'aof']) cpu[k] += counts[k] - counted[k];
  const sent = JSON.parse(s.out.split('\n').find((l) => l.includes('"msg":"every run closed')) ?? '{}');
  cpu.jobs += sent.jobs ?? 0;
  cpu.jobEvents += sent.job_events ?? 0;
  return wall;
}

const zero = {
  scheduler: 0,
  collector: 0,
  workers: 0,
  redis: 0,
  commands: 0,
  evals: 0,
  input: 0,
  rewrites: 0,
  childrenMs: 0,
  aof: 0,
  jobs: 0,
  jobEvents: 0,
  loading: 0,
};
const cpu = { ...zero, redisMark: 0 };
const cpuLine = (events) => {
  const us = (ms) => `${Math.round((1000 * ms) / events)}`;
  const total = (cpu.scheduler + cpu.collector + cpu.workers + cpu.redis) / events;
  const cores = availableParallelism();
  // However the work is spread, this machine cannot run events faster than its cores can pay for them (the
  // surrogate server's own CPU comes on top): the ceiling to read the goal against.
  const line = `  CPU per event, over those runs: scheduler ${us(cpu.scheduler)} us, collector ${us(cpu.collector)} us, workers ${us(cpu.workers)} us, Redis ${us(cpu.redis)} us
  = ${Math.round(1000 * total)} us per event: ${cores} cores can pay for at most ${Math.round((cores * 1000) / total).toLocaleString('en-US')} events/s of distributed mode here, server aside
  Redis per event: ${(cpu.commands / events).toFixed(1)} commands (Lua's included), ${(cpu.evals / events).toFixed(2)} EVALSHA, ${Math.round(cpu.input / events).toLocaleString('en-US')} bytes received; ${(cpu.jobEvents / Math.max(1, cpu.jobs)).toFixed(1)} events per job
  AOF: ${Math.round(cpu.aof / events).toLocaleString('en-US')} bytes appended per event, ${cpu.rewrites} rewrites, their forked children ${us(cpu.childrenMs)} us per event (not in Redis's figure above)
  Workers loading the sweep (once per process: plan, backend, encoders and their modules), not counted above: ${Math.round(cpu.loading)} ms in all`;
  Object.assign(cpu, zero);
  return line;
};

function specFile(name, body) {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, `name: ${name}\ndataset: ${join(root, 'datasets/rheon6.jsonl')}\nprompts: [fq117]\nseed: 5\n${body}`);
  return file;
}

const rate = (events, s) => `${Math.round(events / s).toLocaleString('en-US')} events/s`;

// A: coordination cost, surrogate in process.
if (parts.includes('A')) {
  const geometriesA = quick ? 2 : 3;
  const bodyA = `geometries: [ring, torus2d${quick ? '' : ', {kind: meanfield, sample: 8}'}]\nsizes: [64]\ntemperatures: [0.4, 1.0, 1.6]\ntrials: 2\nsweeps: 10\nconcurrency: 256\nbackend: {kind: surrogate}\n`;
  const specA = specFile('plain', bodyA);
  const eventsA = geometriesA * 3 * 2 * 11 * 64;
  console.log(
    `A. ${eventsA.toLocaleString('en-US')} events, surrogate in process, no latency (wall from process start to complete corpus):`,
  );
  const eA = await embedded(specA, 'plain');
  console.log(`  embedded (one process)     ${eA.toFixed(1).padStart(6)} s  ${rate(eventsA, eA)}`);
  for (const w of [1, 2, 4]) {
    const t = await distributed(specA, 'plain', w, 64);
    console.log(
      `  distributed, ${w} worker${w > 1 ? 's' : ' '}     ${t.toFixed(1).padStart(6)} s  ${rate(eventsA, t)}  (${(eA / t).toFixed(2)}x embedded)`,
    );
  }
  console.log(cpuLine(3 * eventsA));
  // Each process pays once for compiling its hot code and the collector once for the finish step, whatever
  // the sweep's size: the same sweep four times larger (one worker both times) separates those from what
  // each further event costs. The difference of two runs doubles this host's drift (10-25% within the hour),
  // so the pair runs `--pairs N` times (3 by default), small and large alternately, and prints the median
  // with its range: a figure a goal can be read against, and the spread that says how far to trust it.
  if (!quick) {
    const roles = ['scheduler', 'collector', 'workers', 'redis'];
    const measure = async (spec, name) => {
      Object.assign(cpu, zero);
      await distributed(spec, name, 1, 64);
      const taken = Object.fromEntries(roles.map((r) => [r, cpu[r]]));
      Object.assign(cpu, zero);
      rmSync(join(dir, `${name}-w1`), { recursive: true, force: true });
      return taken;
    };
    const specA4 = specFile('plain4', bodyA.replace('trials: 2', 'trials: 8'));
    const more = 3 * eventsA;
    const marginals = [];
    const fixeds = [];
    for (let i = 0; i < pairs; i++) {
      const small = await measure(specA, `plain-again-${i}`);
      const large = await measure(specA4, `plain4-${i}`);
      const marginal = Object.fromEntries(roles.map((r) => [r, (1000 * (large[r] - small[r])) / more]));
      marginals.push(marginal);
      fixeds.push(Object.fromEntries(roles.map((r) => [r, small[r] - (marginal[r] * eventsA) / 1000])));
    }
    const median = (xs) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    };
    const totals = marginals.map((m) => roles.reduce((a, r) => a + m[r], 0));
    const name = (r) => (r === 'redis' ? 'Redis' : r);
    console.log(
      `  CPU per further event (1 worker, ${eventsA.toLocaleString('en-US')} against ${(4 * eventsA).toLocaleString('en-US')} events; median of ${pairs} pair${pairs > 1 ? 's' : ''}): ${roles.map((r) => `${name(r)} ${Math.round(median(marginals.map((m) => m[r])))} us`).join(', ')} = ${Math.round(median(totals))} us${pairs > 1 ? ` (pairs: ${totals.map((t) => Math.round(t)).join(', ')})` : ''}
  paid once per sweep (compiling hot code, the collector's finish step): ${roles.map((r) => `${name(r)} ${Math.round(median(fixeds.map((f) => f[r])))} ms`).join(', ')}`,
    );
  }
}

// B: a continuously batching server with 64 slots and 20 ms per reply.
if (parts.includes('B')) {
  const server = await startSurrogate(['--slots', '64', '--token-ms', '1']);
  const url = server.url;
  const sweepsB = quick ? 4 : 8;
  const specB = specFile(
    'served',
    `geometries: [ring, torus2d]\nsizes: [64]\ntemperatures: [0.4, 1.0]\ntrials: 4\nsweeps: ${sweepsB}\nmax_tokens: 20\nfixed_length: true\nconcurrency: 192\nbackend: {kind: openai, base_url: "${url}/v1", model: surrogate-potts-v1, max_in_flight: 64}\n`,
  );
  const eventsB = 2 * 2 * 4 * (sweepsB + 1) * 64;
  const saturation = 64 / 0.02;
  console.log(
    `\nB. ${eventsB.toLocaleString('en-US')} events against serve-surrogate, 64 slots x 20 ms (${saturation.toLocaleString('en-US')} calls/s if every slot is always busy):`,
  );
  // Busy share of the server's slot-time while it had work: 100% is saturation, however long a reply takes.
  const stats = async () => (await server.stats()).batch;
  const busy = async (run) => {
    const a = await stats();
    const wall = await run();
    const b = await stats();
    const share = (b.busySlotMs - a.busySlotMs) / (b.slots * (b.activeMs - a.activeMs));
    return { wall, share };
  };
  const eB = await busy(() => embedded(specB, 'served'));
  console.log(
    `  embedded, 64 in flight      ${eB.wall.toFixed(1).padStart(6)} s  ${rate(eventsB, eB.wall)}  server slots busy ${(100 * eB.share).toFixed(0)}%`,
  );
  for (const w of [1, 2, 4]) {
    const t = await busy(() => distributed(specB, 'served', w, Math.ceil(64 / w)));
    console.log(
      `  distributed, ${w} worker${w > 1 ? 's' : ' '} x ${Math.ceil(64 / w)}  ${t.wall.toFixed(1).padStart(6)} s  ${rate(eventsB, t.wall)}  server slots busy ${(100 * t.share).toFixed(0)}% (goal: at least 90%)`,
    );
  }
  console.log(cpuLine(3 * eventsB));
  server.stop();
}
stopRedis();
rmSync(dir, { recursive: true, force: true });
