import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OnnxEncoder } from '../src/onnx/encoder.js';

const FIXTURE = new URL('./fixtures/tiny-encoder', import.meta.url).pathname;

let enc: OnnxEncoder;
beforeAll(async () => {
  enc = await OnnxEncoder.fromOptions({ name: 'tiny', path: FIXTURE, threads: 1 });
});
afterAll(async () => {
  await enc.close();
});

describe('onnx encoder on any model output', () => {
  it('embeds empty, whitespace-only, control-character and 100,000-character answers to finite unit vectors', async () => {
    const texts = ['', '   ', '\u0000\u0001', '\u0007\u001b[31m\u007f\r\n', 'The answer is 96. '.repeat(5556).slice(0, 100_000)];
    const vectors = await enc.encode(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const v of vectors) {
      expect(v.every(Number.isFinite)).toBe(true);
      expect(Math.sqrt(v.reduce((s, x) => s + x * x, 0))).toBeCloseTo(1, 5);
    }
  });
});
