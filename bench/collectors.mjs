// bench/collectors: the collector role split over K = 1, 2, 4 processes (`panta scheduler --collectors K`,
// `panta collector --shard I/K`) on the same sweep (surrogate in process, 384-float hashing encoder, reference
// judge, 2 workers), in one run. Prints, per K: wall, CPU per event of the collectors together and of the
// busiest shard, and the ceiling the collectors can pay for (events/s if each shard had a core of its own:
// events / the busiest shard's CPU seconds, up to the finish step, which shard 1 runs once at the end), with
// the scheduler's and Redis's beside them. The goal: CPU per
// event of the collectors together about unchanged, the ceiling growing about linearly with K.
// Run after a build: node bench/collectors.mjs [--quick]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { busyMs, logLine, proc, root } from './lib/panta.mjs';
import { startRedis } from './lib/redis.mjs';

const quick = process.argv.includes('--quick');
const dir = mkdtempSync(join(tmpdir(), 'panta-bench-collectors-'));
const redis = await startRedis(dir);
const spec = join(dir, 'spec.yaml');
const geometries = quick ? '[ring, torus2d]' : '[ring, torus2d, {kind: meanfield, sample: 8}]';
writeFileSync(
  spec,
  `name: collectors\ndataset: ${join(root, 'datasets/rheon6.jsonl')}\nprompts: [fq117]\nseed: 5\ngeometries: ${geometries}\nsizes: [64]\ntemperatures: [0.4, 1.0, 1.6]\ntrials: ${quick ? 2 : 4}\nsweeps: 10\nconcurrency: 256\nbackend: {kind: surrogate}\n`,
);
const events = (quick ? 2 : 3) * 3 * (quick ? 2 : 4) * 11 * 64;

async function sweep(k) {
  await redis.redis.flushall();
  const redisCpu0 = await redis.cpuNow();
  const env = { PANTA_REDIS_URL: redis.url };
  const t0 = performance.now();
  const out = join(dir, `k${k}`);
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
  return { wall, shardMs, finishMs, schedulerMs, redisMs, perJob: (jobs.job_events ?? 0) / Math.max(1, jobs.jobs ?? 1) };
}

const us = (ms) => Math.round((1000 * ms) / events);
console.log(`${events.toLocaleString('en-US')} events, surrogate in process, 2 workers x 64 slots; the collectors split K ways:`);
console.log('   K   wall   collectors us/event (all, busiest)   ceiling events/s   scheduler us/event   Redis us/event   finish step');
let base;
for (const k of [1, 2, 4]) {
  const r = await sweep(k);
  const all = r.shardMs.reduce((a, b) => a + b, 0);
  const busiest = Math.max(...r.shardMs);
  const ceiling = (events * 1000) / busiest;
  base ??= ceiling;
  console.log(
    `${String(k).padStart(4)} ${r.wall.toFixed(1).padStart(6)} s ${String(us(all)).padStart(12)} ${String(us(busiest)).padStart(9)} ${Math.round(ceiling).toLocaleString('en-US').padStart(19)} (${(ceiling / base).toFixed(2)}x)${String(us(r.schedulerMs)).padStart(13)}${String(us(r.redisMs)).padStart(17)}${(r.finishMs / 1000).toFixed(1).padStart(13)} s`,
  );
}
redis.stop();
rmSync(dir, { recursive: true, force: true });
