import { describe, expect, it } from 'vitest';
import { cohenKappa, csvLine, parseCsv, stratifiedSample, type Stratum } from '../src/index.js';

describe("Cohen's kappa", () => {
  it('matches a hand computation: p_o = 7/10, p_e = .5·.5 + .3·.3 + .2·.2 = .38, kappa = .32/.62', () => {
    const a = 'c c c c c h h h n n'.split(' ');
    const b = 'c c c c h h h n n c'.split(' ');
    const r = cohenKappa(a, b);
    expect(r.n).toBe(10);
    expect(r.agreement).toBeCloseTo(0.7, 12);
    expect(r.chance).toBeCloseTo(0.38, 12);
    expect(r.kappa).toBeCloseTo(0.32 / 0.62, 12);
    expect(r.undefinedBecause).toBeNull();
  });

  it('is 1 for perfect agreement over two labels and negative for systematic disagreement', () => {
    expect(cohenKappa(['x', 'y', 'x'], ['x', 'y', 'x']).kappa).toBeCloseTo(1, 12);
    // p_o = 0, p_e = .5·.5 + .5·.5 = .5: kappa = -1
    expect(cohenKappa(['x', 'y'], ['y', 'x']).kappa).toBeCloseTo(-1, 12);
  });

  it('is undefined (null, with the reason), never NaN, when both raters use one same label or nothing was labelled', () => {
    const same = cohenKappa(['c', 'c', 'c'], ['c', 'c', 'c']);
    expect(same.agreement).toBe(1);
    expect(same.kappa).toBeNull();
    expect(same.undefinedBecause).toMatch(/same single label/);
    const none = cohenKappa([], []);
    expect(none.kappa).toBeNull();
    expect(none.agreement).toBeNull();
    // one rater constant, the other not: p_e < 1, kappa defined (0 here: p_o = p_e = 1/2)
    expect(cohenKappa(['c', 'c'], ['c', 'h']).kappa).toBeCloseTo(0, 12);
  });
});

describe('stratified sample', () => {
  // g1: 10 correct + 5 hallucinated; g2: 6 correct; g3: 4 correct + 2 not_known
  const strata: Stratum[] = [
    { group: 'g1', cls: 'correct', size: 10 },
    { group: 'g1', cls: 'hallucinated', size: 5 },
    { group: 'g2', cls: 'correct', size: 6 },
    { group: 'g3', cls: 'correct', size: 4 },
    { group: 'g3', cls: 'not_known', size: 2 },
  ];
  const key = (p: { stratum: number; index: number }) => `${p.stratum}/${p.index}`;

  it('covers every group, then grows classes together until the rare ones run out (hand count: 2 not known, 5 and 5)', () => {
    // coverage: g1 -> hallucinated (rarer than correct), g2 -> correct, g3 -> not_known (none drawn yet);
    // fill 9: not_known to 2 (exhausted), then hallucinated and correct alternately up to 5 each
    for (const seed of [1, 2, 3]) {
      const s = stratifiedSample(strata, 12, seed);
      expect(s.picked).toHaveLength(12);
      expect(new Set(s.picked.map(key)).size).toBe(12);
      expect(s.picked.every((p) => p.index >= 0 && p.index < strata[p.stratum].size)).toBe(true);
      expect(s.perClass).toEqual({
        correct: { drawn: 5, available: 20 },
        hallucinated: { drawn: 5, available: 5 },
        not_known: { drawn: 2, available: 2 },
      });
      expect(new Set(s.picked.map((p) => strata[p.stratum].group))).toEqual(new Set(['g1', 'g2', 'g3']));
      expect(s.picked.slice(0, 3).map((p) => strata[p.stratum].cls)).toEqual(['hallucinated', 'correct', 'not_known']);
      // every item of the two exhausted classes, once
      expect(s.picked.filter((p) => p.stratum === 1).length).toBe(5);
      expect(s.picked.filter((p) => p.stratum === 4).length).toBe(2);
    }
  });

  it('is a function of the seed: the same seed draws the same items, another seed others', () => {
    const big: Stratum[] = Array.from({ length: 7 }, (_, g) => [
      { group: `g${g}`, cls: 'c', size: 50 },
      { group: `g${g}`, cls: 'h', size: g < 5 ? 8 : 0 },
    ]).flat();
    expect(stratifiedSample(big, 50, 9).picked).toEqual(stratifiedSample(big, 50, 9).picked);
    expect(stratifiedSample(big, 50, 9).picked).not.toEqual(stratifiedSample(big, 50, 10).picked);
    // 40 h in the pool, 50 to draw: h and c grow together, 25 each; empty strata are never drawn from
    const s = stratifiedSample(big, 50, 9);
    expect(s.perClass.h.drawn).toBe(25);
    expect(s.picked.every((p) => big[p.stratum].size > 0)).toBe(true);
    // a sample of everything takes every item once
    const all = stratifiedSample(big, 390, 4);
    expect(new Set(all.picked.map(key)).size).toBe(390);
  });

  it('refuses a sample smaller than the number of groups or larger than the pool', () => {
    expect(() => stratifiedSample(strata, 2, 1)).toThrow(/3 groups/);
    expect(() => stratifiedSample(strata, 28, 1)).toThrow(/from 27 items/);
  });
});

describe('CSV', () => {
  it('reads back what it writes: commas, quotes, line breaks, empty fields', () => {
    const rows = [
      ['id', 'response', 'label'],
      ['a1', 'Yes, "really"\nsecond line', ''],
      ['a2', '', 'correct'],
    ];
    const text = `${rows.map(csvLine).join('\r\n')}\r\n`;
    expect(parseCsv(text)).toEqual(rows);
    expect(parseCsv(`\uFEFFx,y\n1,2`)).toEqual([
      ['x', 'y'],
      ['1', '2'],
    ]);
  });

  it('names the record of an unclosed quote', () => {
    expect(() => parseCsv('a,b\n"x,y\n')).toThrow(/record 2: a quoted field is never closed/);
    expect(() => parseCsv('a,"b"c\n')).toThrow(/record 1: text after a closing quote/);
  });
});
