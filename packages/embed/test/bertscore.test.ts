import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BertScorer, greedyMatch, idfWeights, rescale } from '../src/bertscore.js';
import { inspectModelFolder } from '../src/onnx/model-folder.js';
import { OnnxTokenizer } from '../src/onnx/tokenize.js';
// @ts-expect-error plain-JS fixture without types
import { referenceForward } from './fixtures/tiny-encoder-reference.mjs';

const FIXTURE = new URL('./fixtures/tiny-encoder', import.meta.url).pathname;

describe('BERTScore: greedy matching by hand', () => {
  it('precision over candidate tokens, recall over reference tokens, F1 their harmonic mean', () => {
    // cos(c0, r0) = 1, cos(c1, r0) = 0: P = (1 + 0) / 2, R = 1 / 1, F1 = 2 * 0.5 * 1 / 1.5.
    const s = greedyMatch(
      [
        [2, 0],
        [0, 3],
      ],
      [[5, 0]],
    );
    expect(s.precision).toBeCloseTo(0.5, 12);
    expect(s.recall).toBeCloseTo(1, 12);
    expect(s.f1).toBeCloseTo(2 / 3, 12);
    // A second reference token (1, 1): every best cosine is 1 or 1/sqrt(2).
    const t = greedyMatch(
      [
        [1, 0],
        [0, 1],
      ],
      [
        [1, 0],
        [1, 1],
      ],
    );
    expect(t.precision).toBeCloseTo((1 + Math.SQRT1_2) / 2, 12);
    expect(t.recall).toBeCloseTo((1 + Math.SQRT1_2) / 2, 12);
    // Weights: candidate token 0 weighs 3, token 1 weighs 1: P = (3 * 1 + 1 * 0) / 4.
    expect(
      greedyMatch(
        [
          [2, 0],
          [0, 3],
        ],
        [[5, 0]],
        [3, 1],
        [1],
      ).precision,
    ).toBeCloseTo(0.75, 12);
    expect(greedyMatch([], [[1, 0]])).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  it('idf over the references: ln((M + 1) / (df + 1)); baseline rescaling (s - b) / (1 - b)', () => {
    const idf = idfWeights([
      [1, 2, 2],
      [2, 3],
    ]);
    expect(idf(1)).toBeCloseTo(Math.log(3 / 2), 12);
    expect(idf(2)).toBeCloseTo(0, 12);
    expect(idf(9)).toBeCloseTo(Math.log(3), 12);
    const r = rescale({ precision: 0.9, recall: 0.85, f1: 0.8 }, 0.8);
    expect(r.precision).toBeCloseTo(0.5, 12);
    expect(r.recall).toBeCloseTo(0.25, 12);
    expect(r.f1).toBeCloseTo(0, 12);
  });
});

describe('BERTScore with onnxruntime on the tiny encoder fixture (token embeddings, not pooled)', () => {
  let scorer: BertScorer;
  let tok: OnnxTokenizer;
  beforeAll(async () => {
    scorer = await BertScorer.open({ path: FIXTURE });
    tok = OnnxTokenizer.load(inspectModelFolder(FIXTURE));
  });
  afterAll(async () => {
    await scorer?.close();
  });

  /** Token vectors by the fixture's independent plain-JS forward pass, [CLS] and [SEP] dropped. */
  const tokens = (text: string): number[][] => {
    const ids = tok.ids(text);
    const hidden = referenceForward([ids], [ids.map(() => 1)], [ids.map(() => 0)])[0] as number[][];
    return hidden.slice(1, -1);
  };
  const cos = (a: number[], b: number[]) => {
    const d = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    return d(a, b) / Math.sqrt(d(a, a) * d(b, b));
  };

  it('matches BERTScore computed here from the reference forward pass, to 1e-5; a text against itself scores 1', async () => {
    const cand = 'the cat sat on the mat';
    const ref = 'a cat was sitting on the mat';
    const c = tokens(cand);
    const r = tokens(ref);
    expect(c.length).toBeGreaterThan(3);
    const p = c.reduce((s, x) => s + Math.max(...r.map((y) => cos(x, y))), 0) / c.length;
    const rec = r.reduce((s, y) => s + Math.max(...c.map((x) => cos(x, y))), 0) / r.length;
    const [got, same] = await scorer.score([
      [cand, [ref]],
      [ref, [ref]],
    ]);
    expect(got!.precision).toBeCloseTo(p, 5);
    expect(got!.recall).toBeCloseTo(rec, 5);
    expect(got!.f1).toBeCloseTo((2 * p * rec) / (p + rec), 5);
    expect(got!.f1).toBeLessThan(1);
    expect(same!.f1).toBeCloseTo(1, 5);
    expect(scorer.model).toMatch(/^tiny-encoder@sha256:[0-9a-f]{12}$/);
  });

  it('idf weights from the references, several references (the best F1), and a baseline', async () => {
    const cand = 'the cat sat on the mat';
    const refs = ['a cat was sitting on the mat', 'hello world'];
    const idfScorer = await BertScorer.open({ path: FIXTURE, idf: true, baseline: 0.5 });
    try {
      const refIds = refs.map((t) => tok.ids(t).slice(1, -1));
      const m = refIds.length;
      const idf = (id: number) => Math.log((m + 1) / (refIds.filter((ids) => ids.includes(id)).length + 1));
      const cIds = tok.ids(cand).slice(1, -1);
      const c = tokens(cand);
      const byHand = refs.map((ref, k) => {
        const r = tokens(ref);
        const wc = cIds.map(idf);
        const wr = refIds[k]!.map(idf);
        const p = c.reduce((s, x, i) => s + wc[i]! * Math.max(...r.map((y) => cos(x, y))), 0) / wc.reduce((a, b) => a + b, 0);
        const rec = r.reduce((s, y, j) => s + wr[j]! * Math.max(...c.map((x) => cos(x, y))), 0) / wr.reduce((a, b) => a + b, 0);
        return { p, rec, f: (2 * p * rec) / (p + rec) };
      });
      const best = byHand[0]!.f >= byHand[1]!.f ? byHand[0]! : byHand[1]!;
      const [got] = await idfScorer.score([[cand, refs]]);
      expect(got!.precision).toBeCloseTo((best.p - 0.5) / 0.5, 4);
      expect(got!.recall).toBeCloseTo((best.rec - 0.5) / 0.5, 4);
      expect(got!.f1).toBeCloseTo((best.f - 0.5) / 0.5, 4);
    } finally {
      await idfScorer.close();
    }
  });
});
