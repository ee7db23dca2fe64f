import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TEMPLATE,
  GPU_COST_MODELS,
  gpuPlan,
  parseDataset,
  parseSweepSpec,
  planSweep,
  type Prompt,
  RHEON_PREFIX_TEMPLATE,
  requestGpuSeconds,
  runEvents,
  type RunPlan,
  shardPartition,
  shardRuns,
  shardWeigher,
} from '../src/index.js';

const H100 = GPU_COST_MODELS['h100-qwen3-14b'];
const root = new URL('../../../', import.meta.url);

/** examples/eraclitus.yaml as planSweep expands it: 2,160 runs. */
function eraclitus() {
  const spec = parseSweepSpec(readFileSync(new URL('examples/eraclitus.yaml', root), 'utf8'), 'eraclitus.yaml');
  const prompts = parseDataset(readFileSync(new URL('datasets/rheon6.jsonl', root), 'utf8'), 'rheon6.jsonl');
  return { spec, runs: planSweep(spec, prompts, 'eraclitus.yaml') };
}

const PROMPT: Prompt = { id: 'q1', question: 'Is water wet?', accepted: ['yes'], false_answers: ['no'], false_premise: false };

function small(extra: string): { spec: ReturnType<typeof parseSweepSpec>; runs: RunPlan[] } {
  const spec = parseSweepSpec(`name: c\ndataset: d.jsonl\ntemperatures: [1]\nseed: 1\nmax_tokens: 10\n${extra}`, 'c.yaml');
  return { spec, runs: planSweep(spec, [PROMPT], 'c.yaml') };
}

describe('gpu plan', () => {
  it('prices a run call by call: prefill of uncached tokens, decode of answers; a mean field is one chain of sweeps x N updates', () => {
    const { spec, runs } = small('geometries: [meanfield]\nsizes: [8]\nsweeps: 2\n');
    const p = gpuPlan({ spec, runs, template: DEFAULT_TEMPLATE, model: H100, gpus: 4 });
    const g = p.groups[0];
    // The cache serves a few blocks of each prompt only (the default template: the agent's own answer comes early).
    expect(p.gpu_hours).toBeGreaterThan(0);
    expect(p.prefix_cache_saved_gpu_hours).toBeGreaterThan(0);
    expect(g.update_cached_tokens % H100.blockTokens).toBe(0);
    expect(g.update_cached_tokens).toBeLessThan(g.update_prompt_tokens / 2);
    // The chain: one initial answer, then 2 x 8 updates each reading the one before.
    expect(p.critical_path_calls).toBe(1 + 2 * 8);
    const decode = (10 * H100.decodeStepFloorMs) / 1000;
    const update = ((g.update_prompt_tokens - g.update_cached_tokens) * H100.prefillUsPerToken) / 1e6 + decode;
    expect(p.critical_path_hours * 3600).toBeGreaterThan(16 * update);
    expect(p.critical_path_hours * 3600).toBeLessThan(17 * update + 1e-9);
    expect(p.useful_gpus).toBeCloseTo(p.total_gpu_hours / p.critical_path_hours, 9);
    expect(p.wall_hours).toBeCloseTo(Math.max(p.total_gpu_hours / 4, p.critical_path_hours), 12);
    expect(p.judge_gpu_hours).toBe(0);
    // A run too long to walk (over 2^22 events): its chain is events / (N / (k + 1)), a ring's third of N at once.
    const long = small('geometries: [ring]\nsizes: [400000]\nsweeps: 10\n');
    expect(gpuPlan({ spec: long.spec, runs: long.runs, template: DEFAULT_TEMPLATE, model: H100 }).critical_path_calls).toBe(
      Math.ceil((11 * 400_000) / Math.floor(400_000 / 3)),
    );
  });

  it('the LLM judge is priced on its own model; the agents on theirs', () => {
    const { spec, runs } = small(
      'geometries: [ring]\nsizes: [8]\nsweeps: 1\njudge: {kind: llm, backend: {kind: openai, base_url: "http://j:1/v1", model: j}}\n',
    );
    const slow = { ...H100, name: 'slow', prefillUsPerToken: 10 * H100.prefillUsPerToken, decodeUsPerToken: 10 * H100.decodeUsPerToken };
    const a = gpuPlan({ spec, runs, template: DEFAULT_TEMPLATE, model: H100 });
    const b = gpuPlan({ spec, runs, template: DEFAULT_TEMPLATE, model: H100, judgeModel: slow });
    expect(a.judge_gpu_hours).toBeGreaterThan(0);
    expect(b.gpu_hours).toBe(a.gpu_hours);
    expect(b.judge_gpu_hours).toBeCloseTo(10 * a.judge_gpu_hours, 12);
    // 16 judge calls of 32 verdict tokens at least.
    expect(a.judge_gpu_hours * 3600).toBeGreaterThan(requestGpuSeconds(H100, 0, 16 * 32));
  });

  it('a layout with the neighbours first and one order per run lets the cache serve a third of a mean-field update', () => {
    const { spec, runs } = small('geometries: [meanfield]\nsizes: [64]\nsweeps: 1\n');
    const prefixRuns = runs.map((r) => ({ ...r, template: RHEON_PREFIX_TEMPLATE }));
    const base = gpuPlan({ spec, runs, template: DEFAULT_TEMPLATE, model: H100 });
    const shuffled = gpuPlan({ spec, runs: prefixRuns, template: RHEON_PREFIX_TEMPLATE, model: H100 });
    const stable = gpuPlan({ spec, runs: prefixRuns, template: RHEON_PREFIX_TEMPLATE, model: H100, neighbourOrder: 'per-run' });
    // The spec's key says the same.
    const keyed = small('geometries: [meanfield]\nsizes: [64]\nsweeps: 1\nneighbour_order: per-run\n');
    const fromSpec = gpuPlan({
      spec: keyed.spec,
      runs: keyed.runs.map((r) => ({ ...r, template: RHEON_PREFIX_TEMPLATE })),
      template: RHEON_PREFIX_TEMPLATE,
      model: H100,
    });
    expect(fromSpec.gpu_hours).toBe(stable.gpu_hours);
    expect(fromSpec.neighbour_order).toBe('per-run');
    const share = (p: typeof base) => p.groups[0].update_cached_tokens / p.groups[0].update_prompt_tokens;
    expect(share(base)).toBeLessThan(0.1);
    expect(share(shuffled)).toBeLessThan(0.1);
    expect(share(stable)).toBeGreaterThan(0.28);
    expect(share(stable)).toBeLessThan(0.36);
    expect(stable.gpu_hours).toBeLessThan(0.8 * base.gpu_hours);
  });

  it('eraclitus: most GPU time is the mean field of 256; its chains bound the wall clock', () => {
    const { spec, runs } = eraclitus();
    const p = gpuPlan({ spec, runs, template: DEFAULT_TEMPLATE, model: H100, gpus: 64 });
    const mf256 = p.groups.find((g) => g.geometry === 'meanfield' && g.n === 256)!;
    expect(mf256.runs).toBe(180);
    expect(mf256.share).toBeGreaterThan(0.75);
    expect(p.critical_path_calls).toBe(1 + 10 * 256);
    expect(p.critical_path_hours).toBeCloseTo(mf256.critical_path_hours, 12);
    expect(p.useful_gpus).toBeGreaterThan(50);
    expect(p.total_gpu_hours).toBeCloseTo(p.gpu_hours + p.judge_gpu_hours, 9);
    expect(p.groups.reduce((s, g) => s + g.gpu_hours, 0)).toBeCloseTo(p.gpu_hours, 6);
  });
});

describe('shards by planned GPU time', () => {
  it('eraclitus at 64 parts: the parts partition the runs exactly and the largest holds <= 1.1x the mean GPU time', () => {
    const { spec, runs } = eraclitus();
    const weigh = shardWeigher(spec);
    const count = 64;
    const part = shardPartition(runs, count, weigh);
    const load = new Array<number>(count).fill(0);
    const byEvents = new Array<number>(count).fill(0);
    const eventPart = shardPartition(runs, count);
    runs.forEach((r, i) => {
      load[part[i]] += weigh(r);
      byEvents[eventPart[i]] += weigh(r);
    });
    const mean = load.reduce((s, x) => s + x, 0) / count;
    expect(Math.max(...load) / mean).toBeLessThanOrEqual(1.1);
    // Dealt by events, the same array is further from balanced in GPU time.
    expect(Math.max(...byEvents) / mean).toBeGreaterThan(Math.max(...load) / mean);
    // shardRuns gives each part its runs; together exactly the grid, each run once.
    const seen = new Map<string, number>();
    for (let i = 1; i <= count; i++)
      for (const r of shardRuns(runs, { index: i, count }, weigh)) seen.set(r.runId, (seen.get(r.runId) ?? 0) + 1);
    expect(seen.size).toBe(runs.length);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  });

  it('the weights are the plan of the template the spec names, and a pure function of spec and run', () => {
    const { spec, runs } = small('geometries: [ring, meanfield]\nsizes: [16]\nsweeps: 1\ntrials: 2\n');
    const w1 = shardWeigher(spec);
    const w2 = shardWeigher(spec);
    expect(runs.map(w1)).toEqual([...runs].reverse().map(w2).reverse());
    const [ring, mf] = [runs[0], runs[2]];
    expect(runEvents(ring)).toBe(runEvents(mf));
    expect(w1(mf)).toBeGreaterThan(1.5 * w1(ring));
    const prefix = parseSweepSpec(
      'name: c\ndataset: d.jsonl\ntemperatures: [1]\nseed: 1\nmax_tokens: 10\ngeometries: [meanfield]\nsizes: [16]\nsweeps: 1\ntemplate: panta-v1\n',
      'c.yaml',
    );
    const p = planSweep(prefix, [PROMPT], 'c.yaml');
    expect(shardWeigher(prefix)(p[0])).not.toBe(w1(mf));
    // The prefix layout with one neighbour order per run (the spec's neighbour_order): a mean field weighs less.
    const stable = parseSweepSpec(
      'name: c\ndataset: d.jsonl\ntemperatures: [1]\nseed: 1\nmax_tokens: 10\ngeometries: [meanfield]\nsizes: [16]\nsweeps: 1\ntemplate: rheon-a2-prefix\nneighbour_order: per-run\n',
      'c.yaml',
    );
    expect(shardWeigher(stable)(planSweep(stable, [PROMPT], 'c.yaml')[0])).toBeLessThan(w1(mf));
  });
});
