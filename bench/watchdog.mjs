// bench/watchdog: does the scheduler's watchdog stall dispatch when many jobs are in flight for long? A
// cluster of ~1,000 GPUs keeps ~20,000 events in flight, and with calls longer than the watchdog's period
// (15 s) every one of them is older than it at each tick. Runs the scheduler's BullMQ transport against a
// real redis-server (no worker: jobs stay queued, as behind busy GPUs), twice side by side in one process:
//   none: no event in flight but the probes;
//   old:  20,000 events in flight (jobs sized for 1,000 workers of 16 slots), all older than the period;
// and dispatches a probe event every 20 ms for two periods, measuring the time from dispatch() to its job
// being in Redis. Prints p50 / p99 / max per case and the ratio of the p99s (done when within 2x).
// Run after a build: node bench/watchdog.mjs [--watch-ms 15000] [--events 20000] [--quick]   (--help lists them)
//   --quick: a 2 s period instead of 15 s (about 15 s in all instead of a minute and a half).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { BullTransport, EVENT_QUEUE, SweepStore, connect, sweepIdOf, sweepKeys } from '@panta/cluster';
import { loadSweep, plannerFor } from '@panta/engine';
// Every study registered (its scenarios, protocols and tables), as every `panta` command does.
import '@panta/studies';
import { benchArgs, int } from './lib/args.mjs';
import { startRedis } from './lib/redis.mjs';

const root = resolve(import.meta.dirname, '..');
const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  quick: { help: 'a 2 s period instead of 15 s (about 15 s in all instead of a minute and a half)' },
  'watch-ms': { help: "the watchdog's period, ms", value: int(), shownDefault: '15000, --quick 2000' },
  events: { help: 'events in flight in the loaded case', value: int(), default: 20_000 },
});
const watchMs = flags['watch-ms'] ?? (flags.quick ? 2000 : 15_000);
const background = flags.events;
const probeEveryMs = 20;
const dir = mkdtempSync(join(tmpdir(), 'panta-bench-watchdog-'));

// Rings of 256 agents: every agent's first event is ready at once, 256 a run.
const runsNeeded = Math.ceil((background + 4000) / 256);
const temperatures = [0.3, 0.7, 1.0, 1.3];
const specFile = join(dir, 'watchdog.yaml');
writeFileSync(
  specFile,
  `name: watchdog\ndataset: ${join(root, 'datasets', 'rheon6.jsonl')}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [256]\ntemperatures: [${temperatures.join(', ')}]\ntrials: ${Math.ceil(runsNeeded / temperatures.length)}\nsweeps: 2\nseed: 1\nbackend: {kind: surrogate}\n`,
);
const sweep = loadSweep(specFile, { out: join(dir, 'out') });
const tasks = sweep.runs.flatMap((run) =>
  plannerFor(sweep, run, 0)
    .take(256)
    .map((plan) => ({ run, plan })),
);

const server = await startRedis(dir);
const redis = connect(server.url, 'bench-scheduler', { autoPipelining: true });
const queueConnection = connect(server.url, 'bench-scheduler-queue');
const queue = new Queue(EVENT_QUEUE, { connection: queueConnection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
queue.on('error', () => undefined);

// BullMQ loads its scripts and checks the server on the first add: not part of either case.
await queue.add('warm-up', { sweep: 'none', events: [] }, { jobId: 'warm-up' });
await queue.obliterate({ force: true });

/** One case: `old` events dispatched and left to age past the period, then probes for two periods. */
async function measure(old, offset) {
  const sweepId = sweepIdOf(`watchdog-${old}`, sweep.fingerprint);
  const transport = new BullTransport(redis, queue, sweepId, new SweepStore(redis, sweepKeys(sweepId)), watchMs);
  transport.setWorkers(1000, 16_000);
  await transport.start(() => undefined);
  // When each probe was dispatched; its job's add resolving is when it reached Redis.
  const dispatched = new Map();
  const latencies = [];
  const key = (e) => `${e.run}|${e.event}`;
  const seen = (jobs) => {
    const now = performance.now();
    for (const j of jobs) {
      const probes = j.data.events.filter((e) => dispatched.has(key(e)));
      if (probes.length === 0) continue;
      for (const e of probes) {
        latencies.push(now - dispatched.get(key(e)));
        dispatched.delete(key(e));
      }
      // Answered at once (as a worker's commit would be), so that probes never pile up as old jobs.
      transport.deliver({ op: 'done', items: probes.map((e) => ({ run: e.run, event: e.event, calls: 0, tokens: 0 })) });
      void queue.remove(j.opts.jobId).catch(() => undefined);
    }
  };
  const add = queue.add.bind(queue);
  const addBulk = queue.addBulk.bind(queue);
  queue.add = async (name, data, opts) => {
    const job = await add(name, data, opts);
    seen([{ data, opts }]);
    return job;
  };
  queue.addBulk = async (jobs) => {
    const added = await addBulk(jobs);
    seen(jobs);
    return added;
  };
  for (const t of tasks.slice(offset, offset + old)) transport.dispatch(t);
  if (old > 0) {
    for (let i = 0; i < 600 && (await queue.getJobCountByTypes('waiting', 'prioritized')) === 0; i++) await sleep(50);
    await sleep(watchMs + 500);
  }
  const probes = tasks.slice(offset + old);
  const until = performance.now() + 2 * watchMs + 500;
  for (let i = 0; performance.now() < until && i < probes.length; i++) {
    const t = probes[i];
    dispatched.set(`${t.run.runId}|${t.plan.event}`, performance.now());
    transport.dispatch(t);
    await sleep(probeEveryMs);
  }
  await sleep(200);
  queue.add = add;
  queue.addBulk = addBulk;
  await transport.close();
  await queue.obliterate({ force: true });
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return { probes: latencies.length, p50: q(0.5), p99: q(0.99), max: latencies.at(-1), requeued: transport.requeued };
}

console.log(`watchdog period ${watchMs} ms; ${background.toLocaleString('en-US')} events in flight for longer in the second case`);
const none = await measure(0, 0);
const old = await measure(background, 0);
for (const [name, r] of [
  ['none', none],
  [`${background} old`, old],
])
  console.log(
    `${name.padEnd(12)} probes ${String(r.probes).padStart(5)}  dispatch latency p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  max ${r.max.toFixed(2)} ms  requeued ${r.requeued}`,
  );
const ratio = old.p99 / none.p99;
console.log(`p99 ratio (old / none): ${ratio.toFixed(2)}x (done when <= 2x)`);
console.log(JSON.stringify({ watch_ms: watchMs, events: background, p99_none_ms: none.p99, p99_old_ms: old.p99, ratio }));

await queue.close();
queueConnection.disconnect();
redis.disconnect();
server.stop();
rmSync(dir, { recursive: true, force: true });
