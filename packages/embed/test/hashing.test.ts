import { describe, expect, it } from 'vitest';
import { HashingEncoder, checkEmbedding, checkEmbeddings } from '../src/index.js';

const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe('hashing encoder on any model output', () => {
  const encoder = new HashingEncoder('h', 384);
  const huge = 'The answer is 96. '.repeat(5556).slice(0, 100_000);
  const texts = [
    '',
    ' ',
    '\n\t  \r\n',
    '\u0000\u0001',
    '\u0007\u001b[31m\u007f',
    '?!',
    '...',
    huge,
    `${'x'.repeat(100_000)}`,
    'The answer is 96.',
  ];

  it('embeds empty, whitespace, control-character and 100,000-character answers to finite unit vectors', async () => {
    const vectors = await encoder.encode(texts);
    vectors.forEach((v, i) => {
      expect([i, v.length, v.every(Number.isFinite)]).toEqual([i, 384, true]);
      expect(norm(v)).toBeCloseTo(1, 6);
    });
  });

  it('texts without words share a vector only when they trim to the same text', () => {
    const [empty, space, blank, controls] = texts.slice(0, 4).map((t) => encoder.embed(t));
    expect(Array.from(space!)).toEqual(Array.from(empty!));
    expect(Array.from(blank!)).toEqual(Array.from(empty!));
    expect(Array.from(controls!)).not.toEqual(Array.from(empty!));
    expect(Array.from(encoder.embed('?!'))).not.toEqual(Array.from(encoder.embed('...')));
    // A text with words keeps its lexical vector: punctuation around it changes nothing.
    expect(Array.from(encoder.embed('  The answer is 96!  '))).toEqual(Array.from(encoder.embed('the answer is 96')));
  });

  it('a huge answer is embedded the same each time without being memoised', () => {
    const a = encoder.embed(huge);
    const b = encoder.embed(huge);
    expect(b).not.toBe(a);
    expect(Array.from(b)).toEqual(Array.from(a));
    const short = encoder.embed('short answer');
    expect(encoder.embed('short answer')).toBe(short);
  });

  it('memoises within a bound in bytes: many distinct answers never hold more, and equal vectors still come back', () => {
    const small = new HashingEncoder('h', 384, 64 * 1024);
    const held = () => small as unknown as { memoBytes: number; memo: Map<string, Float32Array> };
    let most = 0;
    for (let i = 0; i < 2000; i++) {
      const text = `distinct answer number ${i} `.repeat(1 + (i % 7));
      const v = small.embed(text);
      expect(small.embed(text)).toBe(v);
      most = Math.max(most, held().memoBytes);
    }
    expect(most).toBeLessThanOrEqual(64 * 1024);
    expect(held().memo.size).toBeGreaterThan(0);
    expect(held().memo.size).toBeLessThan(2000);
  });
});

describe('encoder output check', () => {
  it('NaN, infinite and all-zero vectors are an error naming the encoder and the text', () => {
    expect(() => checkEmbedding('minilm', 'The answer is 96.', [0.5, Number.NaN, 0.1])).toThrow(
      /^encoder minilm: NaN at dimension 1 of the embedding of the 17-character text "The answer is 96\."; fix: /,
    );
    expect(() => checkEmbedding('minilm', '', [Number.NEGATIVE_INFINITY, 0])).toThrow(
      /^encoder minilm: an infinite value \(-Infinity\) at dimension 0 of the embedding of the 0-character text ""/,
    );
    expect(() => checkEmbeddings('e5', ['a', 'b'], [Float32Array.of(1, 0), new Float32Array(2)])).toThrow(
      /^encoder e5: an all-zero embedding of the 1-character text "b"/,
    );
    expect(() => checkEmbedding('e5', 'x'.repeat(1000), new Float32Array(3))).toThrow(/the 1000-character text "x{60}\.\.\."/);
    expect(() => checkEmbeddings('e5', ['a', 'b'], [Float32Array.of(1, 0), Float32Array.of(0, -1e-30)])).not.toThrow();
  });
});
