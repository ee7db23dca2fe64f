// bench/prefix-layout: what vLLM's automatic prefix cache saves on eraclitus's mean-field runs (N = 64 and 256)
// under each prompt layout: the default (template rheon-a2, neighbours in a fresh order per event) and the
// prefix layout (template rheon-a2-prefix, neighbour_order per-run), side by side, plus the two mixed ones.
//
// Part 1, the prefix cache. Each run's prompts are rendered by the real templates from the real schedules
// (runs, seeds and neighbour orders as `panta run examples/eraclitus.yaml` plans them), every answer 100 tokens
// (fixed_length), each a distinct text, since a model's 100-token answers practically never repeat. Tokens are
// the plan's estimate, four characters a token. R runs share one simulated GPU, core's VllmEngine on the cost
// model (continuous batching, KV admission, automatic prefix caching by blocks of 16 with LRU eviction), each
// event sent once the events it reads have finished, as Panta's planner sends them: R = 1, 8, 16 (the default
// set; PREFIX_SHARING=1,4,8,16 and PREFIX_SIZES=64,256 choose). Hit rate: prompt tokens served from the cache;
// GPU time: the engine's busy GPU time (prefill of the uncached tokens, decode of the answers), per run, times
// eraclitus's 180 runs per size; makespan: the simulated wall clock of the R runs on their GPU.
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
  GPU_COST_MODELS,
  graphFor,
  parseDataset,
  parseSweepSpec,
  planSweep,
  renderPrompt,
  Schedule,
  VllmEngine,
} from '@panta/core';
// Every study registered (its scenarios, protocols and tables), as every `panta` command does.
import '@panta/studies';
import { benchArgs, oneOf } from './lib/args.mjs';

const root = resolve(import.meta.dirname, '..');
const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  gpu: { help: 'the cost model of the simulated GPU', value: oneOf(Object.keys(GPU_COST_MODELS)), default: 'h100-qwen3-14b' },
  'skip-surrogate': { help: 'part 1 only (the prefix cache), not the surrogate sweeps of part 2' },
});
const model = GPU_COST_MODELS[flags.gpu];

const specFile = join(root, 'examples', 'eraclitus.yaml');
const spec = parseSweepSpec(readFileSync(specFile, 'utf8'), specFile);
const prompts = parseDataset(readFileSync(join(root, 'datasets', 'rheon6.jsonl'), 'utf8'), 'rheon6.jsonl');
const OUTPUT_TOKENS = spec.max_tokens; // fixed_length: every answer this long

/** Eraclitus's mean-field runs of size n, as planned, with neighbour_order as given. */
function meanFieldRuns(n, neighbourOrder) {
  const s = { ...spec, neighbour_order: neighbourOrder };
  return planSweep(s, prompts, specFile).filter((r) => r.geometry.kind === 'meanfield' && r.n === n);
}

// A prompt is rendered with a marker in place of each answer it quotes; its tokens are then the literal text four
// characters a token (ids from the characters) and each quoted answer 100 tokens of its own (ids from the run and
// the event that wrote it), so two prompts have the same tokens exactly when they are the same text.
const MARK = /\uE000(\d+)\uE001/g;
function tokens(text, runKey) {
  const out = [];
  const literal = (from, to) => {
    for (let i = from; i < to; i += 4) {
      let id = 0x811c9dc5;
      for (let c = i; c < Math.min(i + 4, to); c++) id = Math.imul(id ^ text.charCodeAt(c), 0x01000193);
      out.push(id & 0x3fffffff);
    }
  };
  let last = 0;
  for (const m of text.matchAll(MARK)) {
    literal(last, m.index);
    last = m.index + m[0].length;
    const base = Math.imul(runKey, 0x9e3779b1) ^ Math.imul(Number(m[1]) + 1, 0x85ebca6b);
    for (let k = 0; k < OUTPUT_TOKENS; k++) out.push(0x40000000 | (Math.imul(base ^ k, 0x27d4eb2d) >>> 2));
  }
  literal(last, text.length);
  return Int32Array.from(out);
}

/** A run's events with their prompts' tokens, in schedule order. */
function* runRequests(run, template, runKey) {
  const schedule = new Schedule(run, graphFor(run.geometry, run.n, run.seed, new Map()));
  const mark = (event) => `\uE000${event}\uE001`;
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
    yield { event: e.event, reads: e.readVersions, tokens: tokens(`${m.system}\n${m.user}`, runKey) };
  }
}

/**
 * R runs on one simulated GPU (core's VllmEngine: continuous batching, KV admission, prefix cache with LRU
 * eviction), each event sent once every event it reads has finished, as Panta's planner sends them: a mean
 * field's N initial answers at once, then its updates one after another. Prompt tokens, cached tokens and GPU
 * seconds per run; the makespan.
 */
function simulate(runs, template) {
  const engine = new VllmEngine(model, 'fcfs');
  const streams = runs.map((run, i) => ({
    gen: runRequests(run, template, i + 1),
    next: null,
    done: new Uint8Array(run.n * (run.sweeps + 1)),
    key: i,
  }));
  let prompt = 0;
  const submitReady = () => {
    for (const s of streams) {
      for (;;) {
        s.next ??= s.gen.next().value ?? false;
        if (!s.next?.reads.every((v) => s.done[v])) break;
        engine.submit({ id: `${s.key}:${s.next.event}`, promptTokens: s.next.tokens, maxTokens: OUTPUT_TOKENS });
        prompt += s.next.tokens.length;
        s.next = null;
      }
    }
  };
  submitReady();
  for (let t = engine.nextEventTime(); t < Infinity; t = engine.nextEventTime()) {
    engine.advance(t);
    const finished = engine.takeCompletions();
    for (const c of finished) {
      const [key, event] = c.id.split(':').map(Number);
      streams[key].done[event] = 1;
    }
    if (finished.length > 0) submitReady();
  }
  const st = engine.stats();
  return { prompt: prompt / runs.length, cached: st.prefixHits / runs.length, gpu: st.busyGpuSeconds / runs.length, makespan: st.now };
}

const LAYOUTS = [
  { name: 'default (rheon-a2, per-event)', template: 'rheon-a2', order: 'per-event' },
  { name: 'rheon-a2, per-run', template: 'rheon-a2', order: 'per-run' },
  { name: 'rheon-a2-prefix, per-event', template: 'rheon-a2-prefix', order: 'per-event' },
  { name: 'prefix (rheon-a2-prefix, per-run)', template: 'rheon-a2-prefix', order: 'per-run' },
];
const SHARING = (process.env.PREFIX_SHARING ?? '1,8,16').split(',').map(Number);
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const hours = (s) => (s / 3600).toFixed(1);

console.log(
  `prefix cache on eraclitus's mean-field runs, ${model.name} (KV ${model.kvCapacityTokens.toLocaleString('en-US')} tokens, blocks of ${model.blockTokens}; ${spec.sweeps} sweeps, ${OUTPUT_TOKENS}-token answers)`,
);
const totals = {};
for (const n of (process.env.PREFIX_SIZES ?? '64,256').split(',').map(Number)) {
  const planned = { 'per-event': meanFieldRuns(n, 'per-event'), 'per-run': meanFieldRuns(n, 'per-run') };
  const count = planned['per-event'].length;
  // Runs spread over prompts and temperatures, as a scheduler's mixture puts them on one GPU.
  const pick = (order, r) => Array.from({ length: r }, (_, i) => planned[order][(i * 37) % count]);
  console.log(`\nmean field N = ${n}: ${count} runs in eraclitus`);
  console.log('  layout                               runs/GPU  prompt tok/run  hit rate  GPU s/run  eraclitus GPU-h  makespan h');
  for (const layout of LAYOUTS) {
    // The two mixed layouts show that neither half saves anything alone: one run per GPU is enough for that.
    const mixed = layout.template === 'rheon-a2' ? layout.order === 'per-run' : layout.order === 'per-event';
    for (const r of mixed ? [1] : layout.order === 'per-event' ? SHARING.filter((x) => x === 1 || x === 8) : SHARING) {
      const t0 = performance.now();
      const s = simulate(pick(layout.order, r), builtinTemplate(layout.template));
      const key = `${n}/${layout.template}/${layout.order}/${r}`;
      totals[key] = { ...s, total: s.gpu * count };
      console.log(
        `  ${layout.name.padEnd(36)} ${String(r).padStart(8)}  ${Math.round(s.prompt).toLocaleString('en-US').padStart(14)}  ${pct(s.cached / s.prompt).padStart(8)}  ${s.gpu.toFixed(0).padStart(9)}  ${hours(s.gpu * count).padStart(15)}  ${(s.makespan / 3600).toFixed(2).padStart(10)}   (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
      );
    }
  }
}
const side = (r) => {
  const at = (n, t, o) => totals[`${n}/${t}/${o}/${r}`];
  const base = at(64, 'rheon-a2', 'per-event').total + at(256, 'rheon-a2', 'per-event').total;
  const pref = at(64, 'rheon-a2-prefix', 'per-run').total + at(256, 'rheon-a2-prefix', 'per-run').total;
  const hit = (t, o) => (at(64, t, o).cached * 180 + at(256, t, o).cached * 180) / (at(64, t, o).prompt * 180 + at(256, t, o).prompt * 180);
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

if (!flags['skip-surrogate']) {
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
