// bench/prefix-layout: what vLLM's automatic prefix cache saves on eraclitus's mean-field runs (N = 64 and 256)
// under each prompt layout: the default (template rheon-a2, neighbours in a fresh order per event) and the
// prefix layout (template rheon-a2-prefix, neighbour_order per-run), side by side, plus the two mixed ones.
//
// Part 1, the prefix cache. Each run's prompts are rendered by the real templates from the real schedules
// (runs, seeds and neighbour orders as `panta run examples/eraclitus.yaml` plans them), every answer 100 tokens
// (fixed_length), each a distinct text, since a model's 100-token answers practically never repeat. They go
// through one GPU's prefix cache as vLLM keeps it: the KV cache's blocks of 16 tokens, each named by a hash of
// the whole prefix up to its end, evicted least-recently used, the pool the size of the cost model's KV capacity
// (blocks of running requests are the most recently used, so they stay). A prompt is served from the cache for
// its leading blocks found there (whole blocks only, never its last token: core's cachedPrefixTokens), and
// costs prefill for the rest plus the decode of its 100 output tokens (core's requestGpuSeconds). R runs share
// one GPU, their events interleaved (a mean-field run is one chain: one request at a time): R = 1, 4, 8, 16.
// Tokens are the plan's estimate, four characters a token. GPU-hours are per-run GPU time x eraclitus's 180
// runs per size on the h100-qwen3-14b cost model.
//
// Part 2, the order parameters. The surrogate sweep, eraclitus-shaped (its 6 prompts, mean fields of 64 and
// 256, T 0.4 and 1.3, one trial, 10 sweeps, hashing encoder), run in this process with each layout: the largest
// difference of the final m (magnetisation), q (cohesion) and rho per run, and how many answers differ.
//
// Run after a build: node bench/prefix-layout.mjs [--gpu h100-qwen3-14b] [--skip-surrogate]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  builtinTemplate,
  cachedPrefixTokens,
  GPU_COST_MODELS,
  graphFor,
  parseDataset,
  parseSweepSpec,
  planSweep,
  renderPrompt,
  requestGpuSeconds,
  Schedule,
} from '@panta/core';

const root = resolve(import.meta.dirname, '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const model = GPU_COST_MODELS[arg('--gpu', 'h100-qwen3-14b')];
if (!model) throw new Error(`--gpu: one of ${Object.keys(GPU_COST_MODELS).join(', ')}`);

const specFile = join(root, 'examples', 'eraclitus.yaml');
const spec = parseSweepSpec(readFileSync(specFile, 'utf8'), specFile);
const prompts = parseDataset(readFileSync(join(root, 'datasets', 'rheon6.jsonl'), 'utf8'), 'rheon6.jsonl');
const OUTPUT_TOKENS = spec.max_tokens; // fixed_length: every answer this long
const ANSWER_CHARS = OUTPUT_TOKENS * 4;
const BLOCK_CHARS = model.blockTokens * 4;

/** Eraclitus's mean-field runs of size n, as planned, with neighbour_order as given. */
function meanFieldRuns(n, neighbourOrder) {
  const s = { ...spec, neighbour_order: neighbourOrder };
  return planSweep(s, prompts, specFile).filter((r) => r.geometry.kind === 'meanfield' && r.n === n);
}

/**
 * One GPU's prefix cache: full blocks named by their prefix's hash, the least recently used evicted first. Each
 * use of a block is queued with its tick; a block leaves when the queue's front is its latest use and more than
 * `capacity` blocks are held. Names are 30-bit (small integers, cheap map keys): with ~15,000 blocks held, a
 * lookup mistakes a new block for a held one about once in 70,000, and only a prompt's leading blocks count.
 */
class PrefixCache {
  constructor(blocks) {
    this.capacity = blocks;
    this.last = new Map();
    this.queue = [];
    this.ticks = [];
    this.head = 0;
    this.tick = 0;
  }
  /** Leading blocks of `hashes` held, then all of them made most recent (the request's blocks are allocated). */
  serve(hashes) {
    const { last, queue, ticks } = this;
    let hit = 0;
    while (hit < hashes.length && last.has(hashes[hit])) hit++;
    for (const h of hashes) {
      const t = ++this.tick;
      last.set(h, t);
      queue.push(h);
      ticks.push(t);
    }
    while (last.size > this.capacity) {
      const h = queue[this.head];
      if (last.get(h) === ticks[this.head]) last.delete(h);
      this.head++;
    }
    // Drop the queue's stale front (blocks used again since), then compact now and then.
    while (this.head < queue.length && last.get(queue[this.head]) !== ticks[this.head]) this.head++;
    if (this.head > 1 << 20) {
      this.queue = queue.slice(this.head);
      this.ticks = ticks.slice(this.head);
      this.head = 0;
    }
    return hit;
  }
}

// A prompt is rendered with a marker in place of each answer; the walk below hashes the literal text character
// by character and each answer by its identity (run, writer event) and the offset reached in it: the same hash
// as the text itself would give whenever two prompts are the same text, without building 100 KB strings.
const MARK = /\u0002(\d+)\u0003/g;
const P1 = 0x01000193;
function blockHashes(text, runKey) {
  const out = [];
  let a = 0x811c9dc5;
  let b = 0x2545f491;
  let pos = 0;
  const name = (x, y) => (x ^ Math.imul(y, 0x27d4eb2d) ^ (y >>> 13)) & 0x3fffffff;
  const boundary = () => out.push(name(a, b));
  const literal = (from, to) => {
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, P1);
      b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
      if (++pos % BLOCK_CHARS === 0) boundary();
    }
  };
  let last = 0;
  for (const m of text.matchAll(MARK)) {
    literal(last, m.index);
    last = m.index + m[0].length;
    const id = runKey * 1_000_003 + Number(m[1]);
    const a0 = a;
    const b0 = b;
    const end = pos + ANSWER_CHARS;
    for (let p = pos - (pos % BLOCK_CHARS) + BLOCK_CHARS; p <= end; p += BLOCK_CHARS) {
      a = Math.imul(Math.imul(a0 ^ id, P1) ^ (p - pos), P1);
      b = Math.imul(Math.imul(b0 ^ id, 0x5bd1e995) ^ (p - pos), 0x5bd1e995);
      out.push(name(a, b));
    }
    a = Math.imul(Math.imul(a0 ^ id, P1) ^ 0x7fffffff, P1);
    b = Math.imul(Math.imul(b0 ^ id, 0x5bd1e995) ^ 0x7fffffff, 0x5bd1e995);
    pos = end;
  }
  literal(last, text.length);
  return { hashes: out, chars: pos };
}

/** A run's prompts, one at a time: the schedule's events rendered with markers for the answers they quote. */
function* runPrompts(run, template, runKey) {
  const schedule = new Schedule(run, graphFor(run.geometry, run.n, run.seed, new Map()));
  const mark = (event) => `\u0002${event}\u0003`;
  for (let e = schedule.next(); e; e = schedule.next()) {
    const ctx = {
      question: run.prompt.question,
      sweep: e.sweep,
      temperature: run.temperature,
      previous: e.sweep === 0 ? undefined : mark(e.readVersions[0]),
      neighbourAgents: e.neighbours,
      neighbourAnswers: Array.from(e.readVersions.subarray(1), mark),
    };
    const m = renderPrompt(template, ctx);
    yield blockHashes(`${m.system}\n${m.user}`, runKey);
  }
}

/** R runs on one GPU, their events interleaved: prompt tokens, cached tokens and GPU seconds, per run. */
function simulate(runs, template) {
  const cache = new PrefixCache(Math.floor(model.kvCapacityTokens / model.blockTokens));
  const streams = runs.map((run, i) => runPrompts(run, template, i + 1));
  let prompt = 0;
  let cached = 0;
  let gpu = 0;
  for (let live = streams.length; live > 0; ) {
    live = 0;
    for (const s of streams) {
      const next = s.next();
      if (next.done) continue;
      live++;
      const { hashes, chars } = next.value;
      const tokens = Math.ceil(chars / 4);
      const hit = cachedPrefixTokens(model, cache.serve(hashes) * model.blockTokens, tokens);
      prompt += tokens;
      cached += hit;
      gpu += requestGpuSeconds(model, tokens - hit, OUTPUT_TOKENS);
    }
  }
  return { prompt: prompt / runs.length, cached: cached / runs.length, gpu: gpu / runs.length };
}

const LAYOUTS = [
  { name: 'default (rheon-a2, per-event)', template: 'rheon-a2', order: 'per-event' },
  { name: 'rheon-a2, per-run', template: 'rheon-a2', order: 'per-run' },
  { name: 'rheon-a2-prefix, per-event', template: 'rheon-a2-prefix', order: 'per-event' },
  { name: 'prefix (rheon-a2-prefix, per-run)', template: 'rheon-a2-prefix', order: 'per-run' },
];
const SHARING = [1, 4, 8, 16];
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const hours = (s) => (s / 3600).toFixed(1);

console.log(
  `prefix cache on eraclitus's mean-field runs, ${model.name} (KV ${model.kvCapacityTokens.toLocaleString('en-US')} tokens, blocks of ${model.blockTokens}; ${spec.sweeps} sweeps, ${OUTPUT_TOKENS}-token answers)`,
);
const totals = {};
for (const n of (process.env.PREFIX_SIZES ?? "64,256").split(",").map(Number)) {
  const planned = { 'per-event': meanFieldRuns(n, 'per-event'), 'per-run': meanFieldRuns(n, 'per-run') };
  const count = planned['per-event'].length;
  // Runs spread over prompts and temperatures, as a scheduler's mixture puts them on one GPU.
  const pick = (order, r) => Array.from({ length: r }, (_, i) => planned[order][(i * 37) % count]);
  console.log(`\nmean field N = ${n}: ${count} runs in eraclitus`);
  console.log('  layout                               runs/GPU  prompt tok/run  hit rate  GPU s/run  eraclitus GPU-h');
  for (const layout of LAYOUTS) {
    for (const r of layout.template === 'rheon-a2' || layout.order === 'per-event' ? [1, 8] : SHARING) {
      const t0 = performance.now();
      const s = simulate(pick(layout.order, r), builtinTemplate(layout.template));
      const key = `${n}/${layout.template}/${layout.order}/${r}`;
      totals[key] = { ...s, total: s.gpu * count };
      console.log(
        `  ${layout.name.padEnd(36)} ${String(r).padStart(8)}  ${Math.round(s.prompt).toLocaleString('en-US').padStart(14)}  ${pct(s.cached / s.prompt).padStart(8)}  ${s.gpu.toFixed(0).padStart(9)}  ${hours(s.gpu * count).padStart(15)}   (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
      );
    }
  }
}
const side = (r) => {
  const at = (n, t, o) => totals[`${n}/${t}/${o}/${r}`];
  const base = at(64, 'rheon-a2', 'per-event').total + at(256, 'rheon-a2', 'per-event').total;
  const pref = at(64, 'rheon-a2-prefix', 'per-run').total + at(256, 'rheon-a2-prefix', 'per-run').total;
  const hit = (t, o) =>
    (at(64, t, o).cached * 180 + at(256, t, o).cached * 180) / (at(64, t, o).prompt * 180 + at(256, t, o).prompt * 180);
  return { base, pref, hitBase: hit('rheon-a2', 'per-event'), hitPref: hit('rheon-a2-prefix', 'per-run') };
};
const both = totals['64/rheon-a2/per-event/1'] && totals['256/rheon-a2/per-event/1'];
if (both) console.log('\nmean fields 64 + 256 together (360 runs), default vs prefix layout:');
for (const r of both ? [1, 8] : []) {
  const s = side(r);
  console.log(
    `  ${r} run(s) per GPU: hit rate ${pct(s.hitBase)} vs ${pct(s.hitPref)}; GPU-hours ${hours(s.base)} vs ${hours(s.pref)} (ratio ${(s.pref / s.base).toFixed(2)}x)`,
  );
}

if (!process.argv.includes('--skip-surrogate')) {
  const { runSweep } = await import('@panta/engine');
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const dir = mkdtempSync(join(tmpdir(), 'panta-prefix-'));
  const base = `name: prefix-layout
dataset: ${join(root, 'datasets', 'rheon6.jsonl')}
geometries: [meanfield]
sizes: [64, 256]
temperatures: [0.4, 1.3]
trials: 1
sweeps: ${spec.sweeps}
seed: ${spec.seed}
max_tokens: ${OUTPUT_TOKENS}
fixed_length: true
encoders: [{name: hashing, kind: hashing}]
`;
  try {
    const outs = {};
    for (const [name, extra] of [
      ['default', ''],
      ['prefix', 'template: rheon-a2-prefix\nneighbour_order: per-run\n'],
    ]) {
      const file = join(dir, `${name}.yaml`);
      writeFileSync(file, base + extra);
      const t0 = performance.now();
      const result = await runSweep(file, { out: join(dir, name), logLevel: 'silent' });
      outs[name] = join(dir, name);
      console.log(`\nsurrogate sweep, ${name} layout: ${result.status} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    const con = await (await DuckDBInstance.create()).connect();
    const rows = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
    const last = (o) =>
      `SELECT run_id, magnetisation AS m, cohesion AS q, rho FROM read_parquet('${o}/order_params.parquet') QUALIFY sweep = max(sweep) OVER (PARTITION BY run_id, encoder)`;
    const [d] = await rows(
      `SELECT count(*) AS runs, max(abs(a.m - b.m)) AS dm, max(abs(a.q - b.q)) AS dq, max(abs(coalesce(a.rho, 0) - coalesce(b.rho, 0))) AS drho, avg(a.m) AS m, avg(a.q) AS q, avg(a.rho) AS rho
       FROM (${last(outs.default)}) a JOIN (${last(outs.prefix)}) b USING (run_id)`,
    );
    const [ans] = await rows(
      `SELECT count(*) AS answers, count(*) FILTER (WHERE a.response IS DISTINCT FROM b.response) AS differ
       FROM read_parquet('${outs.default}/events/*.parquet') a JOIN read_parquet('${outs.prefix}/events/*.parquet') b USING (run_id, event, role)`,
    );
    console.log(
      `order parameters at the last sweep, default vs prefix layout over ${d.runs} runs: max |dm| ${Number(d.dm).toExponential(1)}, max |dq| ${Number(d.dq).toExponential(1)}, max |drho| ${Number(d.drho).toExponential(1)} (means m ${Number(d.m).toFixed(3)}, q ${Number(d.q).toFixed(3)}, rho ${Number(d.rho).toFixed(3)}); answers that differ: ${ans.differ} of ${ans.answers}`,
    );
    const s = both ? side(8) : {};
    console.log(
      JSON.stringify({
        hit_rate_default: s.hitBase,
        hit_rate_prefix: s.hitPref,
        gpu_hours_default: s.base / 3600,
        gpu_hours_prefix: s.pref / 3600,
        ratio: s.pref / s.base,
        order_params_max_diff: Math.max(Number(d.dm), Number(d.dq), Number(d.drho)),
        answers_differ: Number(ans.differ),
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
