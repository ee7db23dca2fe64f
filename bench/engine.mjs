// bench/engine: throughput of the embedded engine, and how much of a schedule's parallelism it turns into
// speed. Run after a build: `npm run bench:engine` (or node bench/engine.mjs). Prints numbers measured in
// this one run; it asserts nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Schedule, buildGraph, criticalPath } from '@panta/core';
import { runSweep } from '@panta/engine';

process.env.DUCKDB_JE_MALLOC_CONF ??= 'dirty_decay_ms:-1,muzzy_decay_ms:-1';
const dataset = resolve(import.meta.dirname, '..', 'datasets', 'rheon6.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'panta-bench-'));

/** Runs a spec and returns wall time of the whole sweep and of its execution phase (all events written). */
async function timed(name, yaml, concurrency) {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  let executed = 0;
  const t0 = performance.now();
  const summary = await runSweep(file, {
    out: join(dir, name),
    concurrency,
    onProgress: (p) => {
      if (!executed && p.eventsWritten === p.eventsTotal) executed = performance.now();
    },
  });
  const total = performance.now() - t0;
  return { events: summary.eventsWritten, total, executed: (executed || performance.now()) - t0 };
}

// 1. Throughput: surrogate + hashing encoder + reference judge + Parquet shards, three lattices of 729.
const throughputSpec = `name: throughput
dataset: ${dataset}
prompts: [fq117, fq367]
geometries: [ring, torus2d, torus3d]
sizes: [729]
temperatures: [0.1, 0.7, 1.3]
sweeps: 10
seed: 1
`;
const t = await timed('throughput', throughputSpec, 64);
console.log('embedded engine, surrogate + hashing encoder, 18 runs of N = 729 (10 sweeps):');
console.log(`  ${t.events.toLocaleString('en-US')} events; execution ${(t.executed / 1000).toFixed(2)} s = ${Math.round(t.events / (t.executed / 1000)).toLocaleString('en-US')} events/s; with whitening, order parameters and manifest ${(t.total / 1000).toFixed(2)} s = ${Math.round(t.events / (t.total / 1000)).toLocaleString('en-US')} events/s (goal: 30,000)`);

// 2. Parallel speed-up on a ring of 2,000 agents with a 5 ms surrogate, concurrency 1 vs 256.
const n = 2000;
const sweeps = 4;
const ringSpec = `name: ring
dataset: ${dataset}
prompts: [fq367]
geometries: [ring]
sizes: [${n}]
temperatures: [0.7]
sweeps: ${sweeps}
seed: 7
backend: {kind: surrogate, latency_ms: 5}
`;
const plan = criticalPath(new Schedule({ n, sweeps, seed: 0, dynamics: 'asynchronous', protocol: 'glauber' }, buildGraph({ kind: 'ring' }, n, 0)));
// The run seed is derived from the sweep seed and run id; take the real one from a run of the engine.
const one = await timed('ring-c1', ringSpec, 1);
const many = await timed('ring-c256', ringSpec, 256);
const speedup = one.executed / many.executed;
const parallelism = plan.events / plan.criticalPath;
const bound = plan.events / Math.max(plan.criticalPath, Math.ceil(plan.events / 256));
console.log(`ring of ${n} agents, surrogate delayed 5 ms per call, ${plan.events.toLocaleString('en-US')} events (${sweeps} sweeps):`);
console.log(`  concurrency 1: ${(one.executed / 1000).toFixed(2)} s; concurrency 256: ${(many.executed / 1000).toFixed(2)} s; speed-up ${speedup.toFixed(1)}x`);
console.log(`  available parallelism: events / critical path = ${plan.events} / ${plan.criticalPath} = ${parallelism.toFixed(1)}; with 256 slots at most ${bound.toFixed(1)}`);
console.log(`  speed-up / attainable = ${(speedup / bound).toFixed(3)} (goal: within 20%, i.e. >= 0.8)`);
rmSync(dir, { recursive: true, force: true });
