import { normaliseText } from '@panta/core';
import { checkEmbedding } from './check-vector.js';
import type { Encoder } from './encoder.js';

/** Longest text whose vector is memoised (answers are rarely longer; equal huge answers are rare). */
const MEMO_CHARS = 4096;
/**
 * Memory the memo may hold (vectors and texts): 32 MiB is ~10,000 distinct answers of 500 characters at
 * 384 dimensions. Bounded in entries alone, it would grow with the length of the answers, which real models
 * make long (bench/NOTES.md).
 */
const MEMO_BYTES = 32 * 2 ** 20;

function squaredNorm(v: Float32Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  return s;
}

/** FNV-1a over UTF-16 code units, 32 bits. */
function fnv1a(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A model-free lexical encoder (the embedded default): the hashing trick over word unigrams and bigrams,
 * signed buckets, L2-normalised. Deterministic across runs and machines.
 *
 * A text without a word (the empty answer, whitespace, punctuation, control characters) is normal model
 * output: it gets one feature, its trimmed text itself, so it embeds to a unit vector like any other answer
 * (all empty and whitespace-only answers share one; "?!" and "..." differ). Never the zero vector, which
 * would be a spin without a direction. Replies repeat a lot in a population, so vectors are memoised
 * (bounded in bytes, and texts longer than MEMO_CHARS are not kept: a memo of huge answers would hold
 * gigabytes).
 */
export class HashingEncoder implements Encoder {
  readonly model: string;
  private readonly memo = new Map<string, Float32Array>();
  /** What the memo holds: each entry's floats, its text (UTF-16) and about 64 bytes of bookkeeping. */
  private memoBytes = 0;

  constructor(
    readonly name: string,
    readonly dim: number,
    private readonly memoLimitBytes = MEMO_BYTES,
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
      v![h % this.dim] += h & 0x80000000 ? -weight : weight;
    };
    for (let i = 0; i < words.length; i++) {
      add(words[i], 1);
      if (i > 0) add(`${words[i - 1]} ${words[i]}`, 0.5);
    }
    let norm = squaredNorm(v);
    // A text without words, or (vanishingly rare) words whose signed buckets cancel exactly: the text itself
    // is the feature. "\u0001" cannot start a word feature (normalised words are letters and digits).
    if (norm === 0) {
      add(`\u0001${text.trim()}`, 1);
      norm = squaredNorm(v);
    }
    norm = Math.sqrt(norm);
    for (let i = 0; i < this.dim; i++) v[i] /= norm;
    checkEmbedding(this.name, text, v);
    if (text.length <= MEMO_CHARS) {
      const bytes = 4 * this.dim + 2 * text.length + 64;
      if (this.memoBytes + bytes > this.memoLimitBytes) {
        this.memo.clear();
        this.memoBytes = 0;
      }
      this.memo.set(text, v);
      this.memoBytes += bytes;
    }
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
