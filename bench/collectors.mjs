// bench/collectors: the collector role split over K = 1, 2, 4 processes (`panta scheduler --collectors K`,
// `panta collector --shard I/K`) on the same sweep (surrogate in process, 384-float hashing encoder, reference
// judge, 2 workers), in one run. Each K runs the sweep twice, at two sizes (trials T and 3T), so that what
// each further event costs stands apart from what each process pays once whatever the sweep's size
// (compiling its hot code, warming its buffers and its DuckDB): K collectors pay that K times, a campaign of
// millions of events pays it once per process. Prints, per K: wall, CPU per further event of the collectors
// together and of the busiest shard, the ceiling the collectors can pay for (events/s if each shard had a
// core of its own: 1 / the busiest shard's CPU per further event), the scheduler's and Redis's CPU per
// further event beside them, and what each collector paid once. The goal: CPU per further event of the
// collectors together about unchanged, the ceiling growing about linearly with K.
// `--latency MS` gives the surrogate that latency per call, so that the event rate (at most 128 calls in
// flight / MS) leaves the two cores room: at saturation K collectors contend with the workers, the scheduler
// and Redis for them, and every process's CPU per event grows with the processes on the machine.
// Last, each role's CPU per further event against the first K: the scheduler and Redis do the same work per
// event at every K, so their growth is what the added processes cost every process on this machine.
// `--k 1,4` runs only those K (the ratios are then to the first); a K given twice (`--k 1,4,1,4`) runs again
// into a corpus of its own, to alternate K or builds in one run on a drifting machine.
// Run after a build: node bench/collectors.mjs [--quick] [--latency MS] [--k LIST]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, int, list, num } from './lib/args.mjs';
import { busyMs, logLine, proc, root } from './lib/panta.mjs';
import { startRedis } from './lib/redis.mjs';

const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  quick: { help: 'two geometries and trials 2 and 6 instead of three and 4 and 12' },
  latency: { help: "the surrogate's latency per call, ms", value: num(0, true), default: 0 },
  k: { help: 'the collector counts to run, in order (a K given twice runs again)', value: list(int()), default: [1, 2, 4] },
});
const { quick, latency, k: ks } = flags;
const dir = mkdtempSync(join(tmpdir(), 'panta-bench-collectors-'));
const redis = await startRedis(dir);
const geometries = quick ? '[ring, torus2d]' : '[ring, torus2d, {kind: meanfield, sample: 8}]';
const trials = quick ? 2 : 4;
const eventsOf = (t) => (quick ? 2 : 3) * 3 * t * 11 * 64;
function specOf(t) {
  const spec = join(dir, `spec-${t}.yaml`);
  writeFileSync(
    spec,
    `name: collectors\ndataset: ${join(root, 'datasets/rheon6.jsonl')}\nprompts: [fq117]\nseed: 5\ngeometries: ${geometries}\nsizes: [64]\ntemperatures: [0.4, 1.0, 1.6]\ntrials: ${t}\nsweeps: 10\nconcurrency: 256\nbackend: {kind: surrogate${latency > 0 ? `, latency_ms: ${latency}` : ''}}\n`,
  );
  return spec;
}

async function sweep(k, t, rep) {
  const spec = specOf(t);
  await redis.redis.flushall();
  const redisCpu0 = await redis.cpuNow();
  const counted = await redis.counts();
  const env = { PANTA_REDIS_URL: redis.url };
  const t0 = performance.now();
  const out = join(dir, `k${k}-t${t}-${rep}`);
  const collectors = Array.from({ length: k }, (_, i) =>
    proc(['collector', '--out', out, ...(k > 1 ? ['--shard', `${i + 1}/${k}`] : [])], env),
  );
  const workers = [0, 1].map(() => proc(['worker', '--concurrency', '64'], env));
  const scheduler = proc(['scheduler', spec, ...(k > 1 ? ['--collectors', String(k)] : [])], env);
  const s = await scheduler.exited;
  const cs = await Promise.all(collectors.map((c) => c.exited));
  const wall = (performance.now() - t0) / 1000;
  for (const w of workers) w.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
  if (s.code !== 0 || cs.some((c) => c.code !== 0)) throw new Error(`K=${k} failed:\n${s.out}\n${cs.map((c) => c.out).join('\n')}`);
  // The rows' CPU: from start-up to the finish step (shard 1 then measures the whole sweep once).
  const shardMs = cs.map((c, i) => busyMs(c.out, 'collector started', i === 0 ? 'every run written' : 'shard done'));
  const finishMs = busyMs(cs[0].out, 'every run written', 'corpus finished');
  const schedulerMs = busyMs(s.out, 'scheduler started', 'every run closed');
  const redisMs = ((await redis.cpuNow()) - redisCpu0) * 1000;
  const jobs = logLine(s.out, 'every run closed');
  // Redis's own counters (commands inside Lua included): how many steps and reads the split costs, which,
  // unlike CPU on a shared 2-core machine, do not drift from one run to the next.
  const now = await redis.counts();
  const counts = Object.fromEntries(['commands', 'evals', 'reads'].map((k) => [k, now[k] - counted[k]]));
  return { wall, shardMs, finishMs, schedulerMs, redisMs, counts, perJob: (jobs.job_events ?? 0) / Math.max(1, jobs.jobs ?? 1) };
}

const small = eventsOf(trials);
const large = eventsOf(3 * trials);
const more = large - small;
const perEvent = (a, b) => (1000 * (b - a)) / more;
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
console.log(
  `${small.toLocaleString('en-US')} and ${large.toLocaleString('en-US')} events, surrogate in process${latency > 0 ? ` (${latency} ms a call)` : ''}, 2 workers x 64 slots; the collectors split K ways; CPU per further event:`,
);
console.log(
  '   K   wall (small, large)   collectors us/event (all, busiest)   ceiling events/s   scheduler us/event   Redis us/event   once per collector   finish step',
);
const countLines = [];
const sameWork = [];
let base;
for (const [rep, k] of ks.entries()) {
  const a = await sweep(k, trials, rep);
  const b = await sweep(k, 3 * trials, rep);
  const shards = a.shardMs.map((ms, i) => perEvent(ms, b.shardMs[i]));
  const all = sum(shards);
  const busiest = Math.max(...shards);
  // What each collector paid whatever the sweep's size: its CPU on the small sweep less its events' share.
  const once = a.shardMs.map((ms, i) => ms - (shards[i] * small) / 1000);
  const ceiling = 1e6 / busiest;
  base ??= ceiling;
  console.log(
    `${String(k).padStart(4)} ${a.wall.toFixed(1).padStart(6)} s ${b.wall.toFixed(1).padStart(6)} s ${String(Math.round(all)).padStart(13)} ${String(Math.round(busiest)).padStart(9)} ${Math.round(ceiling).toLocaleString('en-US').padStart(19)} (${(ceiling / base).toFixed(2)}x)${String(Math.round(perEvent(a.schedulerMs, b.schedulerMs))).padStart(13)}${String(Math.round(perEvent(a.redisMs, b.redisMs))).padStart(17)}${String(Math.round(sum(once) / k)).padStart(16)} ms${(b.finishMs / 1000).toFixed(1).padStart(12)} s`,
  );
  sameWork.push({ k, scheduler: perEvent(a.schedulerMs, b.schedulerMs), redis: perEvent(a.redisMs, b.redisMs), collectors: all });
  const c = b.counts;
  countLines.push(
    `${String(k).padStart(4)} ${String(Math.round((1000 * sum(b.shardMs)) / large)).padStart(14)} ${(c.commands / large).toFixed(2).padStart(9)} ${(c.evals / large).toFixed(3).padStart(10)} ${((1000 * c.reads) / large).toFixed(1).padStart(16)}`,
  );
}
// CPU differences between two sweeps drift with whatever else the machine runs; the whole large sweep's
// collectors' CPU and Redis's counters are steadier.
console.log(
  `The ${large.toLocaleString('en-US')}-event sweeps whole: collectors' CPU per event (start-up and finish apart), Redis per event\n   K  collectors us  commands    EVALSHA   collector reads per 1,000 events`,
);
for (const line of countLines) console.log(line);
// The scheduler and Redis do the same work per event whatever K (Redis's counters above say so): what their CPU
// per event gains over the first K is what K more processes cost everyone on this machine's cores (caches,
// switches), not work the split added. The collectors' growth reads against it.
const [first] = sameWork;
const pct = (x, y) => `${x >= y ? '+' : ''}${Math.round((100 * (x - y)) / y)}%`;
console.log('CPU per further event against the first K: roles whose work does not change with K, and the collectors');
console.log('   K  scheduler   Redis   collectors');
for (const w of sameWork)
  console.log(
    `${String(w.k).padStart(4)} ${pct(w.scheduler, first.scheduler).padStart(10)} ${pct(w.redis, first.redis).padStart(7)} ${pct(w.collectors, first.collectors).padStart(12)}`,
  );
redis.stop();
rmSync(dir, { recursive: true, force: true });
