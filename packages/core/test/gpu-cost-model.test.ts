import { describe, expect, it } from 'vitest';
import { cachedPrefixTokens, decodeStepMs, GPU_COST_MODELS, InputError, parseGpuCostModel, requestGpuSeconds } from '../src/index.js';

describe('GPU cost model', () => {
  const h100 = GPU_COST_MODELS['h100-qwen3-14b'];

  it('prices a request as prefill of the uncached prompt plus decode of the output', () => {
    // 26,600 prompt tokens at 88 us and 100 output tokens at 220 us: 2.3628 s.
    expect(requestGpuSeconds(h100, 26_600, 100)).toBeCloseTo(2.3628, 6);
    expect(requestGpuSeconds(h100, 0, 0)).toBe(0);
  });

  it('holds Qwen3-14B at 160 KiB of KV per token, about 9 mean-field-256 prompts on an H100 and 22 on an H200', () => {
    expect(h100.kvBytesPerToken).toBe(160 * 1024);
    expect(Math.floor(h100.kvCapacityTokens / 26_700)).toBe(8);
    expect(Math.floor(GPU_COST_MODELS['h200-qwen3-14b'].kvCapacityTokens / 26_700)).toBe(21);
  });

  it('bounds a decode step below by the weights read once', () => {
    expect(decodeStepMs(h100, 1)).toBe(h100.decodeStepFloorMs);
    expect(decodeStepMs(h100, 256)).toBeCloseTo(256 * 0.22, 9);
  });

  it('caches whole blocks only, never the last prompt token', () => {
    expect(cachedPrefixTokens(h100, 15, 100)).toBe(0);
    expect(cachedPrefixTokens(h100, 33, 100)).toBe(32);
    expect(cachedPrefixTokens(h100, 100, 100)).toBe(96); // 99 shareable -> 6 blocks
    expect(cachedPrefixTokens(h100, 0, 100)).toBe(0);
  });

  it('reads a built-in name or a JSON file overriding a base, and refuses bad fields in one line', () => {
    expect(parseGpuCostModel('h200-qwen3-14b', '--gpu')).toBe(GPU_COST_MODELS['h200-qwen3-14b']);
    const m = parseGpuCostModel('{"base": "h100-qwen3-14b", "kvCapacityTokens": 100000, "gpu": "test"}', 'm.json');
    expect(m.kvCapacityTokens).toBe(100_000);
    expect(m.gpu).toBe('test');
    expect(m.name).toBe('m.json');
    expect(m.prefillUsPerToken).toBe(h100.prefillUsPerToken);
    expect(() => parseGpuCostModel('a100', '--gpu')).toThrow(InputError);
    expect(() => parseGpuCostModel('{"kvCapacityTokens": -1}', 'm.json')).toThrow(/m\.json: kvCapacityTokens: must be a positive number/);
    expect(() => parseGpuCostModel('{"blockTokens": 1.5}', 'm.json')).toThrow(/must be an integer/);
    expect(() => parseGpuCostModel('{"kv": 1}', 'm.json')).toThrow(/m\.json: kv: unknown field/);
    expect(() => parseGpuCostModel('{"base": "x"}', 'm.json')).toThrow(/base: unknown built-in/);
    expect(() => parseGpuCostModel('{oops', 'm.json')).toThrow(/m\.json: not JSON/);
  });
});
