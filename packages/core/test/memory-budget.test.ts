import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TEMPLATE,
  checkContextBudget,
  checkMemoryBudget,
  formatBytes,
  parseMemoryBudget,
  parseSweepSpec,
  planSweep,
  sweepMemoryBytes,
  type Prompt,
} from '../src/index.js';

const GiB = 2 ** 30;
/** A machine of 24 GiB, Node's default heap limit of about 4 GiB. */
const MACHINE = { bytes: 24 * GiB, source: "this machine's 24 GiB", heapBytes: 4 * GiB };
const noEdges = () => 0;

const spec = (geometries: string, sizes: string, extra = '') =>
  parseSweepSpec(
    `name: m\ndataset: d.jsonl\ngeometries: ${geometries}\nsizes: ${sizes}\ntemperatures: [0.7]\nsweeps: 10\nseed: 1\nconcurrency: 256\n${extra}`,
    'm.yaml',
  );

/** The largest size a refusal names ("use a size of at most N"), as a number. */
function largestNamed(check: () => void): number {
  try {
    check();
  } catch (e) {
    const m = /use a size of at most ([\d,]+)/.exec((e as Error).message);
    if (m) return Number(m[1].replaceAll(',', ''));
    throw e;
  }
  throw new Error('not refused');
}

describe('memory budget', () => {
  it("passes the issue's populations of 10^6 on its machine: ring, 1000 x 1000 torus2d, 100^3 torus3d, meanfield sample 8", () => {
    const s = spec('[ring, torus2d, torus3d, {kind: meanfield, sample: 8}]', '[1000000]');
    expect(() => checkMemoryBudget(s, 1, 'm.yaml', noEdges, MACHINE)).not.toThrow();
    // ...and within the 4 GiB the issue allows a ring of 10^6.
    expect(sweepMemoryBytes(s, 1_000_000, 2, true, 1).total).toBeLessThan(4 * GiB);
  });

  it('refuses a ring over the memory budget in one line, naming the largest size that fits, which does fit', () => {
    const s = spec('[ring]', '[1000000]', 'memory_budget: 1 GiB\n');
    const available = { bytes: parseMemoryBudget(s.memory_budget!)!, source: 'memory_budget 1 GiB', heapBytes: 4 * GiB };
    const check = (sz: typeof s) => () => checkMemoryBudget(sz, 1, 'm.yaml', noEdges, available);
    expect(check(s)).toThrow(
      /^m\.yaml: sizes\[0\]: N = 1,000,000 on ring needs about [\d.]+ GiB of memory \(2,048 bytes per agent of each open run, 768 MiB for the process\), more than 90% of memory_budget 1 GiB; fix: use a size of at most [\d,]+ on ring, or less concurrency; or set memory_budget if this process may use more$/,
    );
    const largest = largestNamed(check(s));
    expect(largest).toBeGreaterThan(10_000);
    expect(check(spec('[ring]', `[${largest}]`))).not.toThrow();
    expect(check(spec('[ring]', `[${largest + 1}]`))).toThrow(/use a size of at most/);
  });

  it("refuses a size over Node's heap limit and says how to raise it", () => {
    const s = spec('[ring]', '[100, 10000000]');
    expect(() => checkMemoryBudget(s, 1, 'm.yaml', noEdges, { ...MACHINE, bytes: 1024 * GiB })).toThrow(
      /^m\.yaml: sizes\[1\]: N = 10,000,000 on ring needs about [\d.]+ GiB of Node's heap \(512 bytes per agent of each open run\), more than 90% of its limit of 4 GiB; fix: use a size of at most [\d,]+ on ring, or less concurrency; or raise the limit \(NODE_OPTIONS=--max-old-space-size=\d+\)$/,
    );
  });

  it('counts every run of a small size as open at once, and one large run with the next', () => {
    const s = spec('[ring]', '[64]');
    const at = (runs: number) => sweepMemoryBytes(s, 64, 2, true, runs).total;
    expect(at(1000) - at(1)).toBe(63 * (at(2) - at(1)));
    const big = sweepMemoryBytes(s, 1_000_000, 2, true, 1000).total;
    expect(big).toBe(sweepMemoryBytes(s, 1_000_000, 2, true, 2).total);
  });

  it('a full mean field over the budget is told of the sampled mean field; a sampled one of the same size fits', () => {
    const full = spec('[meanfield]', '[16000]');
    const available = { bytes: 2 * GiB, source: 'memory_budget 2 GiB', heapBytes: 4 * GiB };
    expect(() => checkMemoryBudget(full, 1, 'm.yaml', noEdges, available)).toThrow(/on meanfield \(or \{kind: meanfield, sample: k\}\)/);
    expect(() => checkMemoryBudget(spec('[{kind: meanfield, sample: 8}]', '[16000]'), 1, 'm.yaml', noEdges, available)).not.toThrow();
  });

  it('reads memory_budget as bytes or a size with a unit; anything else is one line at the key', () => {
    expect(parseMemoryBudget('16 GiB')).toBe(16 * GiB);
    expect(parseMemoryBudget('512MB')).toBe(512e6);
    expect(parseMemoryBudget('1.5 gib')).toBe(1.5 * GiB);
    expect(parseMemoryBudget(4096)).toBe(4096);
    for (const bad of ['0 GiB', 'lots', '12', '-1 GiB', 12.5, 0]) expect(parseMemoryBudget(bad)).toBeUndefined();
    expect(() => spec('[ring]', '[64]', 'memory_budget: lots\n')).toThrow(
      /^m\.yaml: memory_budget: "lots" is not a memory size above 0; fix: use bytes \(an integer\), or a size such as "16 GiB" or "512 MB"$/,
    );
    expect(formatBytes(1.5 * GiB)).toBe('1.5 GiB');
    expect(formatBytes(24 * GiB)).toBe('24 GiB');
  });
});

describe('context window of a full mean field', () => {
  const prompt: Prompt = {
    id: 'q',
    question: 'How old was she?',
    accepted: ['96'],
    false_answers: ['95'],
    false_premise: false,
    source: '',
  };
  const backend = 'backend: {kind: openai, base_url: "http://127.0.0.1:8000/v1", model: m, max_context_tokens: 32768}\n';

  it('is refused with the largest full mean field that fits, which does fit', () => {
    const check = (n: number) => () => {
      const s = spec('[meanfield]', `[${n}]`, backend);
      checkContextBudget(s, planSweep(s, [prompt], 'm.yaml'), DEFAULT_TEMPLATE, 'm.yaml');
    };
    let largest = 0;
    try {
      check(4096)();
    } catch (e) {
      largest = Number(/or sizes up to (\d+) for full mean field/.exec((e as Error).message)![1]);
    }
    expect(largest).toBeGreaterThan(2);
    expect(check(largest)).not.toThrow();
    expect(check(largest + 1)).toThrow(/may need [\d,]+ tokens/);
  });
});
