// bench/saturation: does the engine keep a continuously batching server busy? Starts `panta serve-surrogate`
// as its own process with 64 slots and a vLLM-like latency model, runs a sweep of many runs against it
// through the real OpenAI client, and prints the share of slot-time kept busy while work was available
// (goal: at least 95%). Run after a build: node bench/saturation.mjs
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runSweep } from '@panta/engine';
// Every study registered (its scenarios, protocols and tables), as every `panta` command does.
import '@panta/studies';
import { startSurrogate } from './lib/surrogate.mjs';

process.env.DUCKDB_JE_MALLOC_CONF ??= 'dirty_decay_ms:-1,muzzy_decay_ms:-1';
const root = resolve(import.meta.dirname, '..');
const slots = 64;
const server = await startSurrogate(['--slots', String(slots), '--token-ms', '3', '--batch-slowdown', '0.005']);
const { url } = server;

const dir = mkdtempSync(join(tmpdir(), 'panta-saturation-'));
const spec = join(dir, 'spec.yaml');
writeFileSync(
  spec,
  `name: saturation
dataset: ${join(root, 'datasets/rheon6.jsonl')}
prompts: [fq117, fq367]
geometries: [ring, torus2d]
sizes: [64]
temperatures: [0.1, 0.4, 0.7, 1.0]
trials: 3
sweeps: 4
seed: 3
max_tokens: 64
fixed_length: true
concurrency: 192
backend: {kind: openai, base_url: "${url}/v1", model: surrogate-potts-v1, max_in_flight: 96}
`,
);
const t0 = performance.now();
const summary = await runSweep(spec, { out: join(dir, 'out') });
const wall = (performance.now() - t0) / 1000;
const stats = await server.stats();
server.stop();
const b = stats.batch;
const busy = b.busySlotMs / (b.slots * b.activeMs);
console.log(
  `sweep of ${summary.runsPlanned} runs, ${summary.eventsWritten.toLocaleString('en-US')} events against serve-surrogate (${slots} slots, 64 tokens/reply, 3 ms/token growing 0.5% per running sequence):`,
);
console.log(
  `  wall ${wall.toFixed(1)} s = ${Math.round(summary.eventsWritten / wall)} calls/s; server busy ${(b.activeMs / 1000).toFixed(1)} s; most sequences at once ${b.maxRunning}, most queued ${b.maxQueued}`,
);
console.log(`  slot-time kept busy while work was available: ${(100 * busy).toFixed(1)}% (goal: at least 95%)`);
rmSync(dir, { recursive: true, force: true });
