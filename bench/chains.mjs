// bench/chains: do chain-bound runs keep the slots busy? A full mean field is one chain of events (every
// event reads every agent), so a run keeps exactly one call in flight, and only as many runs open at once as
// there are slots keep them all busy. Runs 256 full mean fields of N = 64 against `panta serve-surrogate`
// (continuous batching, as many slots as the sweep's concurrency, a fixed 1 s per reply) and prints, embedded
// and distributed: the slot-time kept busy (sequences running integrated over time / (slots x time the server
// had work)), events/s, runs open at peak, peak RSS, and the median time from a reply to the dispatch of the
// event that waited for it (embedded; the distributed mode's is in its log as-is).
// Run after a build: node bench/chains.mjs [--quick] [--only-embedded | --only-distributed] [--runs R] [--slots S]
//   --quick: 250 ms per reply instead of 1 s (about half a minute a sweep instead of two);
//   --runs 512 --slots 512: the memory of 512 open chains; --timeline: calls in flight every 5 s (embedded).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readStatus } from '@panta/cluster';
import { InProcessTransport, runSweep } from '@panta/engine';
// Every study registered (its scenarios, protocols and tables), as every `panta` command does.
import '@panta/studies';
import { benchArgs, int } from './lib/args.mjs';
import { proc } from './lib/panta.mjs';
import { startRedis } from './lib/redis.mjs';
import { startSurrogate } from './lib/surrogate.mjs';

process.env.DUCKDB_JE_MALLOC_CONF ??= 'dirty_decay_ms:-1,muzzy_decay_ms:-1';
const root = resolve(import.meta.dirname, '..');
const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  quick: { help: '250 ms per reply instead of 1 s' },
  timeline: { help: 'print calls in flight every 5 s (embedded)' },
  'only-embedded': { help: 'run the embedded mode only' },
  'only-distributed': { help: 'run the distributed mode only' },
  runs: { help: 'full mean fields of N = 64 in the sweep', value: int(), default: 256 },
  slots: { help: "the server's slots and the sweep's concurrency", value: int(), default: 256 },
  sweeps: { help: 'sweeps per run', value: int(), default: 1 },
});
const { quick, timeline, runs, slots, sweeps } = flags;
const n = 64;
const tokens = 64;
const replyMs = quick ? 250 : 1000;
const modes = flags['only-embedded'] ? ['embedded'] : flags['only-distributed'] ? ['distributed'] : ['embedded', 'distributed'];
const dir = mkdtempSync(join(tmpdir(), 'panta-bench-chains-'));

// Fixed latency per reply: continuous batching with no slowdown, tokens x token-ms = replyMs, and as many
// slots as the sweep may keep in flight (its stats integrate the sequences running).
const server = await startSurrogate(['--slots', String(slots), '--token-ms', String(replyMs / tokens)]);
const { url } = server;
const stats = async () => (await server.stats()).batch;

// runs = temperatures x trials; every run a full mean field (every event reads all N agents).
const temperatures = [0.4, 0.7, 1.0, 1.3];
const trials = Math.ceil(runs / temperatures.length);
const spec = join(dir, 'chains.yaml');
writeFileSync(
  spec,
  `name: chains
dataset: ${join(root, 'datasets/rheon6.jsonl')}
prompts: [fq117]
geometries: [meanfield]
sizes: [${n}]
temperatures: [${temperatures.join(', ')}]
trials: ${trials}
sweeps: ${sweeps}
seed: 5
max_tokens: ${tokens}
fixed_length: true
concurrency: ${slots}
backend: {kind: openai, base_url: "${url}/v1", model: surrogate-potts-v1, max_in_flight: ${slots}}
`,
);
const runsTotal = temperatures.length * trials;
const events = runsTotal * (sweeps + 1) * n;
console.log(
  `${runsTotal} full mean fields of N = ${n}, ${sweeps} sweep${sweeps > 1 ? 's' : ''} (${events.toLocaleString('en-US')} events; sweep 0 answers at once, then each run is a chain of ${sweeps * n}), ${slots} slots x ${replyMs} ms per reply: at best ${((Math.max(Math.ceil(events / slots), sweeps * n + 1) * replyMs) / 1000).toFixed(0)} s (every slot always busy)`,
);

const median = (xs) => {
  if (xs.length === 0) return Number.NaN;
  const s = Float64Array.from(xs).sort();
  return s[s.length >> 1];
};

/** The server's busy share of slot-time while it had work, and over the whole sweep's wall time. */
async function measured(run) {
  const a = await stats();
  const t0 = performance.now();
  const extra = await run();
  const wall = (performance.now() - t0) / 1000;
  const b = await stats();
  const busy = b.busySlotMs - a.busySlotMs;
  return { wall, active: b.activeMs - a.activeMs, busy, ...extra };
}

const line = (name, r) =>
  `  ${name.padEnd(12)} ${r.wall.toFixed(1).padStart(6)} s  ${Math.round(events / r.wall).toLocaleString('en-US')} events/s  slots busy ${((100 * r.busy) / (r.active * slots)).toFixed(1)}% while the server had work, ${((100 * r.busy) / (slots * r.wall * 1000)).toFixed(1)}% of the wall (goal: at least 90%)\n               runs open at peak ${r.peakOpen ?? '?'}, peak RSS ${r.rss}${r.gap !== undefined ? `, median reply -> dependent dispatch ${r.gap.toFixed(2)} ms` : ''}`;

if (modes.includes('embedded')) {
  // In this process, so that its peak RSS is the sweep's (the server is another process) and a transport
  // wrapper sees each reply and the dispatch that follows it: in a chain a run's next event waits for the
  // run's last reply, so the gap from a run's reply to its next dispatch is the executor's own delay.
  const lastReply = new Map();
  const gaps = [];
  let peakOpen = 0;
  let shown = -1;
  const t0 = performance.now();
  const transport = (services) => {
    const inner = new InProcessTransport(services);
    return new Proxy(inner, {
      get(target, key) {
        if (key === 'start')
          return (onMessage) =>
            target.start((m) => {
              if (m.type === 'outcome') lastReply.set(m.task.run.runId, performance.now());
              onMessage(m);
            });
        if (key === 'dispatch')
          return (task) => {
            const at = lastReply.get(task.run.runId);
            if (at !== undefined && task.kind !== 'boundary') {
              gaps.push(performance.now() - at);
              lastReply.delete(task.run.runId);
            }
            target.dispatch(task);
          };
        const v = Reflect.get(target, key);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  };
  const r = await measured(async () => {
    const summary = await runSweep(spec, {
      out: join(dir, 'embedded'),
      logLevel: 'silent',
      transport,
      onProgress: (p) => {
        peakOpen = Math.max(peakOpen, p.runsActive);
        const t = Math.floor((performance.now() - t0) / 5000);
        if (timeline && t > shown) {
          shown = t;
          console.log(`    ${5 * t} s: ${p.inflight} in flight, ${p.runsActive} runs open, ${p.runsFinished} finished`);
        }
      },
    });
    if (summary.status !== 'complete') throw new Error(`embedded sweep ${summary.status}`);
    return {};
  });
  r.peakOpen = peakOpen;
  r.rss = `${Math.round(process.resourceUsage().maxRSS / 1024)} MiB (this process)`;
  r.gap = median(gaps);
  console.log(line('embedded', r));
}

if (modes.includes('distributed')) {
  // The deploy files' Redis settings (bench/lib/redis.mjs).
  const redisServer = await startRedis(dir);
  const env = { PANTA_REDIS_URL: redisServer.url };
  const workers = 2;
  // Peak RSS of each role from the kernel (VmHWM), read while it runs.
  const hwm = new Map();
  const watch = (name, p) => {
    const t = setInterval(async () => {
      try {
        const { readFile } = await import('node:fs/promises');
        const s = await readFile(`/proc/${p.child.pid}/status`, 'utf8');
        const kb = Number(/VmHWM:\s+(\d+)/.exec(s)?.[1] ?? 0);
        hwm.set(name, Math.max(hwm.get(name) ?? 0, kb));
      } catch {}
    }, 500);
    p.exited.then(() => clearInterval(t));
  };
  const r = await measured(async () => {
    const collector = proc(['collector', '--out', join(dir, 'distributed')], env);
    const ws = Array.from({ length: workers }, () => proc(['worker', '--concurrency', String(Math.ceil(slots / workers))], env));
    const scheduler = proc(['scheduler', spec], env);
    watch('scheduler', scheduler);
    watch('collector', collector);
    ws.forEach((w, i) => watch(`worker ${i + 1}`, w));
    // Runs open at peak, from the scheduler's status reports in Redis (what `panta status` shows).
    let peakOpen = 0;
    const polling = setInterval(() => {
      readStatus(env.PANTA_REDIS_URL)
        .then((st) => {
          for (const sw of st.sweeps) peakOpen = Math.max(peakOpen, sw.runsActive);
        })
        .catch(() => undefined);
    }, 1000);
    const s = await scheduler.exited;
    clearInterval(polling);
    const c = await collector.exited;
    for (const w of ws) w.child.kill('SIGTERM');
    await Promise.all(ws.map((w) => w.exited));
    if (s.code !== 0 || c.code !== 0) throw new Error(`distributed sweep failed:\n${s.out}\n${c.out}`);
    return { peakOpen };
  });
  redisServer.stop();
  r.rss = [...hwm].map(([k, kb]) => `${k} ${Math.round(kb / 1024)} MiB`).join(', ');
  console.log(line(`distributed, ${workers} workers`, r));
}

server.stop();
rmSync(dir, { recursive: true, force: true });
