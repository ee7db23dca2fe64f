// bench/cluster-sim: a GPU cluster simulated on this machine. N `panta serve-surrogate`
// endpoints stand for N GPUs (continuous batching, S slots each, a fixed call time: N S / call events/s
// demanded), each with a `panta worker` pinned to it as its node-local endpoint (--base-url), plus a real
// redis-server, one scheduler and one collector, all `panta` processes. The sweep is shaped like
// examples/eraclitus.yaml: every prompt, four geometries with sizes per geometry, a quarter of the runs full
// mean field (chains of dependent events), hashing encoder (384), reference judge.
// It prints the slot-time the endpoints kept busy (their own counters, GET /panta/stats), events/s, and CPU
// per event for every role (their log lines' cpu_ms) and for Redis (INFO cpu).
// Run after a build: node bench/cluster-sim.mjs [--quick] [--endpoints N] [--slots S] [--call-ms MS] [--workers K]
//   [--endpoint-processes] [--embedded]
//   --embedded: the same sweep in one `panta run` process against the same endpoints (no Redis roles): the
//   slot-time the executor itself keeps busy, which the distributed mode is read against.
//   --workers K (K < N): K workers, each balancing over every endpoint (the spec's base_url list), since a
//   worker's --base-url names one endpoint.
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchArgs, int } from './lib/args.mjs';
import { busyMs, logLine, proc, root, started } from './lib/panta.mjs';
import { startRedis } from './lib/redis.mjs';
import { startSurrogate, startSurrogates } from './lib/surrogate.mjs';

const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  quick: { help: '1 trial instead of 3' },
  endpoints: { help: 'simulated GPUs (serve-surrogate endpoints)', value: int(), default: 16 },
  slots: { help: 'slots per endpoint', value: int(), default: 64 },
  'call-ms': { help: 'time of one call, ms', value: int(), default: 2000 },
  workers: { help: 'workers (fewer than endpoints: each balances over every endpoint)', value: int(), shownDefault: 'one per endpoint' },
  'endpoint-processes': { help: 'one server process per endpoint instead of one for all' },
  embedded: { help: 'also the same sweep in one `panta run` process' },
});
const { quick, endpoints, slots } = flags;
const callMs = flags['call-ms'];
const workerCount = Math.min(flags.workers ?? endpoints, endpoints);
const pinned = workerCount === endpoints;
// A fixed-length reply of TOKENS tokens: the batch's step time makes a call last callMs.
const TOKENS = 20;

// The mixture. Chains stay short against the sweep (the longest is a mean field of 8: 32 calls) while the
// mean fields' calls, run one at a time per run, weigh about as much against 64 open runs as eraclitus's do.
const temperatures = [0.4, 1.0, 1.6];
const trials = quick ? 1 : 3;
const sweeps = 3;
const sizes = { ring: [16, 32, 48], torus2d: [16, 25, 36], torus3d: [27, 64, 125], meanfield: [4, 6, 8] };
const prompts = readFileSync(join(root, 'datasets/rheon6.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim()).length;
const units = prompts * temperatures.length * trials;
const eventsOf = (list) => units * list.reduce((a, n) => a + (sweeps + 1) * n, 0);
const events = Object.values(sizes).reduce((a, list) => a + eventsOf(list), 0);
const meanfieldEvents = eventsOf(sizes.meanfield);
const runs = units * Object.values(sizes).flat().length;

const dir = mkdtempSync(join(tmpdir(), 'panta-bench-cluster-sim-'));
// Interrupted or failed, the bench leaves no process behind (a collector would wait for its sweep forever).
let redisServer;
process.on('exit', () => {
  for (const c of started) c.kill('SIGKILL');
  redisServer?.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

/** CPU a process has used so far, in ms (/proc/<pid>/stat utime + stime; Linux's clock ticks are 10 ms). */
function procCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}
/** The whole machine's CPU: busy and total jiffies (every core), for the share of the cores the sweep saw in use. */
function machineCpu() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + f[4];
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

const redis = await startRedis(dir);
redisServer = redis.server;
const env = { PANTA_REDIS_URL: redis.url };

// The simulated GPUs' servers cost this machine CPU a real cluster's would not: all in one process by default
// (`serve-surrogate --endpoints N`), so that N Node runtimes' own costs do not starve the roles measured;
// --endpoint-processes runs one process per endpoint, as before.
const serverArgs = ['--slots', String(slots), '--token-ms', String(callMs / TOKENS)];
const servers = flags['endpoint-processes']
  ? await Promise.all(Array.from({ length: endpoints }, () => startSurrogate(serverArgs)))
  : await startSurrogates(endpoints, serverArgs);
const serverProcesses = [...new Map(servers.map((sv) => [sv.child.pid, sv])).values()];

const spec = join(dir, 'sim.yaml');
writeFileSync(
  spec,
  `name: cluster-sim
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
max_tokens: ${TOKENS}
fixed_length: true
concurrency: ${endpoints * slots}
backend:
  kind: openai
  base_url: [${servers.map((s) => `"${s.url}/v1"`).join(', ')}]
  model: surrogate-potts-v1
  max_in_flight: ${slots}
encoders: [{name: hashing, kind: hashing, dim: 384}]
judge: {kind: reference}
`,
);

const demanded = (endpoints * slots * 1000) / callMs;
const fmt = (n) => Math.round(n).toLocaleString('en-US');
console.log(
  `cluster-sim: ${endpoints} endpoints x ${slots} slots x ${callMs} ms per call (${fmt(demanded)} events/s if every slot is always busy), ${workerCount} worker${workerCount > 1 ? 's' : ''} ${pinned ? 'each pinned to its endpoint' : 'balancing over every endpoint'} x ${(endpoints * slots) / workerCount}, ${availableParallelism()} cores`,
);
console.log(
  `  sweep: ${fmt(runs)} runs (${fmt(units * sizes.meanfield.length)} full mean field), ${fmt(events)} events (${fmt(meanfieldEvents)} in mean-field chains, the longest ${(sweeps + 1) * Math.max(...sizes.meanfield)} calls = ${(((sweeps + 1) * Math.max(...sizes.meanfield) * callMs) / 1000).toFixed(0)} s); ${fmt(events / demanded)} s if every slot is always busy`,
);

const busyNow = async () => {
  const all = await Promise.all(servers.map((s) => s.stats()));
  return { busy: all.reduce((a, s) => a + s.batch.busySlotMs, 0), completed: all.reduce((a, s) => a + s.completed, 0) };
};

const redisCpu0 = await redis.cpuNow();
const counts0 = await redis.counts();
const machine0 = machineCpu();
const busy0 = await busyNow();
const t0 = performance.now();
const capacity = endpoints * slots;
const share = (a, b) => (b.busy - a.busy) / (capacity * (b.t - a.t));
const pct = (x) => `${(100 * x).toFixed(0)}%`;

/** Slot-time busy sampled once a second until `done()` says stop: the share per tenth of the wall shows a tail. */
function sample(done) {
  const samples = [{ t: 0, ...busy0 }];
  const finished = (async () => {
    while (!done()) {
      await sleep(1000);
      if (done()) break;
      samples.push({ t: performance.now() - t0, ...(await busyNow()) });
      // A line on stderr every 10 s, for a long sweep on a loaded machine: calls answered, recent busy share.
      if (samples.length % 10 === 1) {
        const [a, b] = [samples.at(-11), samples.at(-1)];
        process.stderr.write(
          `  ... ${(b.t / 1000).toFixed(0)} s: ${fmt(b.completed - busy0.completed)} calls answered, last 10 s ${pct(share(a, b))} busy\n`,
        );
      }
    }
  })();
  return { samples, finished };
}

/** The wall, events/s, slot-time busy (whole wall, first call to last reply, per tenth). */
function printBusy(samples, wallMs, written, completed) {
  const firstCall = samples.find((x) => x.busy > busy0.busy) ?? samples[0];
  const lastCall = samples.findLast((x, i) => i > 0 && x.busy > samples[i - 1].busy) ?? samples.at(-1);
  console.log(
    `  wall ${(wallMs / 1000).toFixed(1)} s (process start to complete corpus), ${fmt(written)} events written: ${fmt((1000 * written) / wallMs)} events/s of ${fmt(demanded)} demanded`,
  );
  console.log(
    `  slot-time busy: ${pct(share(samples[0], samples.at(-1)))} of the wall, ${pct(share(firstCall, lastCall))} from the first call to the last reply (goal: at least 90%); ${fmt(completed)} calls answered`,
  );
  const tenths = [];
  for (let k = 0; k < 10; k++) {
    const from = (k * wallMs) / 10;
    const to = ((k + 1) * wallMs) / 10;
    // Samples are 1 s apart: each tenth takes the samples nearest its ends.
    const a = samples.reduce((best, x) => (Math.abs(x.t - from) < Math.abs(best.t - from) ? x : best));
    const b = samples.reduce((best, x) => (Math.abs(x.t - to) < Math.abs(best.t - to) ? x : best));
    tenths.push(b.t > a.t ? pct(share(a, b)) : '-');
  }
  console.log(`  busy per tenth of the wall: ${tenths.join(' ')}`);
}

// --embedded: the same sweep in one `panta run` against the same endpoints, the executor's own ceiling for
// the distributed mode's slot-time.
if (flags.embedded) {
  const run = proc(['run', spec, '--out', join(dir, 'out')]);
  let over = false;
  const { samples, finished } = sample(() => over);
  const r = await run.exited;
  const wallMs = performance.now() - t0;
  over = true;
  await finished;
  if (r.code !== 0) {
    console.error(`cluster-sim: the embedded run failed (${r.code}):\n${r.out.slice(-3000)}`);
    process.exit(1);
  }
  const busy1 = await busyNow();
  samples.push({ t: wallMs, ...busy1 });
  console.log('  embedded (one `panta run` process):');
  printBusy(samples, wallMs, events, busy1.completed - busy0.completed);
  for (const sv of serverProcesses) sv.stop();
  await Promise.all(serverProcesses.map((sv) => sv.exited));
  redis.stop();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

const collector = proc(['collector', '--out', join(dir, 'out')], env);
const workers = Array.from({ length: workerCount }, (_, i) =>
  proc(
    ['worker', '--concurrency', String((endpoints * slots) / workerCount), ...(pinned ? ['--base-url', `${servers[i].url}/v1`] : [])],
    env,
  ),
);
const scheduler = proc(['scheduler', spec], env);

let done = false;
const { samples, finished: sampling } = sample(() => done);
// A collector or worker that exits before the sweep is done would leave the scheduler waiting: stop there.
const early = [['collector', collector], ...workers.map((w, i) => [`worker ${i}`, w])].map(([name, p]) =>
  p.exited.then((r) => ({ name, ...r })),
);
const first = await Promise.race([scheduler.exited.then(() => undefined), Promise.race(early)]);
if (first && (first.name !== 'collector' || first.code !== 0)) {
  console.error(`cluster-sim: ${first.name} exited (code ${first.code}) before the sweep was done:\n${first.out.slice(-3000)}`);
  process.exit(1);
}
const s = await scheduler.exited;
const c = await collector.exited;
const wallMs = performance.now() - t0;
done = true;
await sampling;
const busy1 = await busyNow();
samples.push({ t: wallMs, ...busy1 });
const machine1 = machineCpu();
const workersWhole = workers.reduce((a, w) => a + procCpuMs(w.child.pid), 0);
for (const w of workers) w.child.kill('SIGTERM');
const ws = await Promise.all(workers.map((w) => w.exited));
if (s.code !== 0 || c.code !== 0) {
  console.error(`cluster-sim: the sweep failed (scheduler ${s.code}, collector ${c.code}):\n${s.out.slice(-3000)}\n${c.out.slice(-3000)}`);
  process.exit(1);
}
const redisMs = ((await redis.cpuNow()) - redisCpu0) * 1000;
const counts1 = await redis.counts();
const serversMs = serverProcesses.reduce((a, sv) => a + procCpuMs(sv.child.pid), 0);

const written = logLine(c.out, 'corpus finished').events ?? Number.NaN;
const roles = {
  scheduler: busyMs(s.out, 'scheduler started', 'every run closed'),
  collector: busyMs(c.out, 'collector started', 'corpus finished'),
  workers: ws.reduce((a, w) => a + busyMs(w.out, 'worker started', 'worker stopped'), 0),
  redis: redisMs,
};
printBusy(samples, wallMs, written, busy1.completed - busy0.completed);
const us = (ms) => `${fmt((1000 * ms) / written)} us`;
const total = roles.scheduler + roles.collector + roles.workers + roles.redis;
console.log(
  `  CPU per event: scheduler ${us(roles.scheduler)}, collector ${us(roles.collector)}, workers ${us(roles.workers)} (${workerCount} together), Redis ${us(roles.redis)} = ${us(total)} (goal: at most 300 us, Redis at most 100 us)`,
);
console.log(
  `  outside those: the workers' start-up ${us(workersWhole - roles.workers)}, the ${endpoints} endpoints ${us(serversMs)}; the machine's ${availableParallelism()} cores were ${pct((machine1.busy - machine0.busy) / (machine1.total - machine0.total))} busy (everything on it, other users included)`,
);
const jobs = logLine(s.out, 'every run closed');
console.log(
  `  Redis per event: ${((counts1.commands - counts0.commands) / written).toFixed(1)} commands (Lua's included), ${((counts1.evals - counts0.evals) / written).toFixed(2)} EVALSHA, ${fmt((counts1.input - counts0.input) / written)} bytes received; ${((jobs.job_events ?? 0) / Math.max(1, jobs.jobs ?? 0)).toFixed(1)} events per job; ${counts1.rewrites - counts0.rewrites} AOF rewrites`,
);

for (const sv of serverProcesses) sv.stop();
await Promise.all(serverProcesses.map((sv) => sv.exited));
redis.stop();
rmSync(dir, { recursive: true, force: true });
