import { normaliseText } from '@panta/core';
import type { Encoder } from './encoder.js';

/** FNV-1a over UTF-16 code units, 32 bits. */
function fnv1a(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A model-free lexical encoder (the embedded default): the hashing trick over word unigrams and bigrams,
 * signed buckets, L2-normalised. Deterministic across runs and machines; the empty text maps to the zero
 * vector. Replies repeat a lot in a population, so vectors are memoised (bounded).
 */
export class HashingEncoder implements Encoder {
  readonly model: string;
  private readonly memo = new Map<string, Float32Array>();

  constructor(
    readonly name: string,
    readonly dim: number,
    private readonly memoSize = 65_536,
  ) {
    this.model = `hashing-uni-bigram-fnv1a-d${dim}`;
  }

  embed(text: string): Float32Array {
    let v = this.memo.get(text);
    if (v) return v;
    v = new Float32Array(this.dim);
    const words = normaliseText(text).split(' ').filter(Boolean);
    const add = (feature: string, weight: number) => {
      const h = fnv1a(feature, 0);
      v![h % this.dim]! += h & 0x80000000 ? -weight : weight;
    };
    for (let i = 0; i < words.length; i++) {
      add(words[i]!, 1);
      if (i > 0) add(`${words[i - 1]} ${words[i]}`, 0.5);
    }
    let norm = 0;
    for (let i = 0; i < this.dim; i++) norm += v[i]! * v[i]!;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < this.dim; i++) v[i]! /= norm;
    if (this.memo.size >= this.memoSize) this.memo.clear();
    this.memo.set(text, v);
    return v;
  }

  embedNow(text: string): Float32Array {
    return this.embed(text);
  }

  async encode(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embed(t));
  }

  async close(): Promise<void> {}
}
