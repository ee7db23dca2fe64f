import { describe, expect, it } from 'vitest';
import {
  CovarianceAccumulator,
  driftStats,
  driftTolerance,
  fitWhitening,
  focusSeries,
  measureSnapshot,
  rngFrom,
  snapshotAccuracy,
  toSpin,
  type Tag,
} from '../src/index.js';

const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

describe('order parameters', () => {
  it('matches values computed by hand on three spins', () => {
    // s1 = s2 = (1, 0), s3 = (0, 1): sum (2, 1), m = sqrt(5)/3; pairs: 1, 0, 0 -> q = 1/3
    const spins = [
      [1, 0],
      [1, 0],
      [0, 1],
    ];
    const tags: Tag[] = ['correct', 'hallucinated', 'not_known'];
    const m = measureSnapshot(spins, spins, tags, 2);
    expect(m.magnetisation).toBeCloseTo(Math.sqrt(5) / 3, 12);
    expect(m.cohesion).toBeCloseTo(1 / 3, 12);
    expect(m.rho).toBe(0.5);
    expect([m.n_correct, m.n_hallucinated, m.n_not_known, m.n_judge_failure]).toEqual([1, 1, 1, 0]);
    expect(m.cds_sys).toBeCloseTo(1 - 1 / 3, 12);
  });

  it('cohesion equals (N m^2 - 1)/(N - 1) for unit spins', () => {
    const rng = rngFrom(1);
    for (const n of [2, 5, 40]) {
      const spins = Array.from({ length: n }, () => unit(Array.from({ length: 7 }, () => rng.next() - 0.3)));
      const m = measureSnapshot(spins, spins, new Array(n).fill('correct'), 7);
      let pairs = 0;
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) pairs += spins[i].reduce((s, x, d) => s + x * spins[j][d], 0);
      expect(m.cohesion).toBeCloseTo(pairs / (n * (n - 1)), 12);
      expect(m.cohesion).toBeCloseTo((n * m.magnetisation ** 2 - 1) / (n - 1), 12);
    }
  });

  it('rho is undefined when nobody is judged right or wrong', () => {
    expect(measureSnapshot([[1]], [[1]], ['not_known'], 1).rho).toBeNull();
  });

  it('drift: onset after two sweeps below the best so far, recovery when back at that level', () => {
    // accuracy: 0.5, 0.8, 0.6, 0.7, 0.9 -> below best (0.8) at t = 2 and 3: onset 2; t = 4 back above: recovered
    const d = driftStats([0.5, 0.8, 0.6, 0.7, 0.9], 0);
    expect(d.drift_onset).toBe(2);
    expect(d.recovered).toBe(true);
    expect(d.focus_total).toBeCloseTo(0.9 - 0.5, 12);
    expect(driftStats([0.5, 0.8, 0.6, 0.7, 0.65], 0).recovered).toBe(false);
    expect(driftStats([0.5, 0.6, 0.7], 0).drift_onset).toBeNull();
  });

  it('drift: a fall within the tolerance is noise, a fall beyond it for two sweeps is drift', () => {
    const wobble = [0.75, 0.8125, 0.75, 0.6875, 0.75, 0.8125];
    expect(driftStats(wobble, 0).drift_onset).toBe(2);
    expect(driftStats(wobble, 0.125).drift_onset).toBeNull();
    // Only the fall below best - tolerance counts: 0.5 at t = 2 and 3 is 0.3125 below the best 0.8125.
    const fall = [0.75, 0.8125, 0.5, 0.5, 0.625, 0.8125];
    expect(driftStats(fall, 0.25)).toEqual({ focus_total: expect.closeTo(0.0625, 12), drift_onset: 2, recovered: true });
    expect(driftStats([0.75, 0.8125, 0.5, 0.75, 0.5, 0.5], 0.25).drift_onset).toBe(4);
    // Recovery needs the pre-drift level itself, not that level less the tolerance.
    expect(driftStats([0.75, 0.8125, 0.5, 0.5, 0.75], 0.25).recovered).toBe(false);
  });

  it('drift tolerance: the spec number, or four binomial standard errors at p = 1/2 for auto', () => {
    expect(driftTolerance('auto', 16)).toBe(0.5);
    expect(driftTolerance('auto', 64)).toBe(0.25);
    expect(driftTolerance('auto', 729)).toBeCloseTo(4 * Math.sqrt(0.25 / 729), 15);
    expect(driftTolerance(0.05, 16)).toBe(0.05);
  });

  it('auto tolerance: pure binomial noise rarely drifts, a real fall does', () => {
    const rng = rngFrom(11);
    for (const n of [16, 64, 729]) {
      let drifted = 0;
      for (let run = 0; run < 400; run++) {
        const accuracy = Array.from({ length: 11 }, () => {
          let correct = 0;
          for (let i = 0; i < n; i++) correct += rng.next() < 0.5 ? 1 : 0;
          return correct / n;
        });
        if (driftStats(accuracy, driftTolerance('auto', n)).drift_onset !== null) drifted++;
      }
      expect(drifted / 400).toBeLessThan(0.02);
    }
    // 729 agents falling from 80% to 65% correct and staying there.
    expect(driftStats([0.8, 0.8, 0.8, 0.65, 0.65, 0.65], driftTolerance('auto', 729)).drift_onset).toBe(3);
  });

  it('accuracy scores not_known and judge_failure as wrong: a slide into "I do not know" drifts while rho stays 0', () => {
    const n = 16;
    const snapshot = (correct: number, notKnown: number, failures = 0) => {
      const tags: Tag[] = [
        ...Array<Tag>(correct).fill('correct'),
        ...Array<Tag>(notKnown).fill('not_known'),
        ...Array<Tag>(failures).fill('judge_failure'),
      ];
      const spins = tags.map(() => [1]);
      return measureSnapshot(spins, spins, tags, 1);
    };
    const snapshots = [snapshot(14, 2), snapshot(14, 2), snapshot(5, 11), snapshot(3, 11, 2), snapshot(2, 14)];
    expect(snapshots.map((m) => m.rho)).toEqual([0, 0, 0, 0, 0]);
    const accuracy = snapshots.map(snapshotAccuracy);
    expect(accuracy).toEqual([0.875, 0.875, 0.3125, 0.1875, 0.125]);
    expect(focusSeries(accuracy)).toEqual([0, -0.5625, -0.125, -0.0625]);
    expect(driftStats(accuracy, driftTolerance('auto', n))).toEqual({ focus_total: -0.75, drift_onset: 2, recovered: false });
  });

  it('an all-unjudgeable snapshot: rho null, accuracy 0, so FOCUS and drift stay defined', () => {
    const tags: Tag[] = ['not_known', 'judge_failure', 'not_known', 'judge_failure'];
    const spins = [
      [1, 0],
      [0, 1],
      [1, 0],
      [0, 1],
    ];
    const m = measureSnapshot(spins, spins, tags, 2);
    expect(m.rho).toBeNull();
    expect([m.n_not_known, m.n_judge_failure]).toEqual([2, 2]);
    expect(snapshotAccuracy(m)).toBe(0);
    const accuracy = [snapshotAccuracy(m), snapshotAccuracy(m), snapshotAccuracy(m)];
    expect(focusSeries(accuracy)).toEqual([0, 0]);
    expect(driftStats(accuracy, 0)).toEqual({ focus_total: 0, drift_onset: null, recovered: null });
    // Only a snapshot without tags has no accuracy; FOCUS around it is null.
    expect(snapshotAccuracy({ n_correct: 0, n_hallucinated: 0, n_not_known: 0, n_judge_failure: 0 })).toBeNull();
    expect(focusSeries([0.5, null, 0.25])).toEqual([null, null]);
    expect(driftStats([null, null], 0)).toEqual({ focus_total: null, drift_onset: null, recovered: null });
  });
});

describe('whitening', () => {
  it('mean and sample covariance of known data', () => {
    const acc = new CovarianceAccumulator(2);
    for (const x of [
      [1, 2],
      [3, 6],
      [5, 10],
    ])
      acc.add(x);
    const { mean, cov } = acc.finish();
    expect(Array.from(mean)).toEqual([3, 6]);
    expect(Array.from(cov)).toEqual([4, 8, 8, 16]);
  });

  it('W = (C + lambda I)^(-1/2) on a known diagonal covariance', () => {
    // Points (+-2, 0) and (0, +-1) repeated: C = diag(8/3, 2/3) with n - 1 = 3
    const acc = new CovarianceAccumulator(2);
    for (const x of [
      [2, 0],
      [-2, 0],
      [0, 1],
      [0, -1],
    ])
      acc.add(x);
    const w = fitWhitening(acc, 'zca');
    const c = [8 / 3, 2 / 3];
    const lambda = (1e-3 * (c[0] + c[1])) / 2;
    expect(w.lambda).toBeCloseTo(lambda, 15);
    expect(w.matrix[0]).toBeCloseTo(1 / Math.sqrt(c[0] + lambda), 12);
    expect(w.matrix[3]).toBeCloseTo(1 / Math.sqrt(c[1] + lambda), 12);
    expect(Math.abs(w.matrix[1])).toBeLessThan(1e-12);
  });

  it('W (C + lambda I) W = I on correlated data, and spins are unit vectors', () => {
    const rng = rngFrom(2);
    const d = 5;
    const data = Array.from({ length: 400 }, () => {
      const z = Array.from({ length: d }, () => rng.next() - 0.5);
      return [z[0] * 3 + z[1], z[1] * 0.5, z[2] + z[0], z[3] * 2, z[4]];
    });
    const acc = new CovarianceAccumulator(d);
    for (const x of data) acc.add(x);
    const { cov } = acc.finish();
    const w = fitWhitening(acc, 'zca');
    const reg = Array.from(cov, (c, i) => c + (i % (d + 1) === 0 ? w.lambda : 0));
    const mul = (a: ArrayLike<number>, b: ArrayLike<number>) =>
      Array.from({ length: d * d }, (_, ij) => {
        let s = 0;
        for (let e = 0; e < d; e++) s += a[Math.floor(ij / d) * d + e] * b[e * d + (ij % d)];
        return s;
      });
    const identity = mul(mul(w.matrix, reg), w.matrix);
    identity.forEach((v, ij) => expect(v).toBeCloseTo(ij % (d + 1) === 0 ? 1 : 0, 9));
    const s = toSpin(w, data[0]);
    expect(Math.hypot(...s)).toBeCloseTo(1, 12);
  });

  it('few distinct answers (m <= d): the Gram-matrix fit equals the full eigen-decomposition', () => {
    const rng = rngFrom(4);
    const d = 12;
    const distinct = Array.from({ length: 5 }, () => Array.from({ length: d }, () => rng.next() - 0.5));
    const weights = [3, 1, 7, 2, 4];
    const few = new CovarianceAccumulator(d);
    distinct.forEach((x, k) => few.add(x, weights[k]));
    expect(few.samples).toHaveLength(5);
    // The same data added one answer at a time: 17 > d samples, so only the sums are kept.
    const many = new CovarianceAccumulator(d);
    distinct.forEach((x, k) => {
      for (let r = 0; r < weights[k]; r++) many.add(x);
    });
    expect(many.samples).toBeNull();
    const a = fitWhitening(few, 'zca');
    const b = fitWhitening(many, 'zca');
    expect(a.samples).toBe(17);
    expect(a.lambda).toBeCloseTo(b.lambda, 14);
    const scale = Math.max(...Array.from(b.matrix, Math.abs));
    a.matrix.forEach((v, ij) => expect(Math.abs(v - b.matrix[ij]) / scale).toBeLessThan(1e-9));
    a.mean.forEach((v, i) => expect(v).toBeCloseTo(b.mean[i], 14));
  });

  it('raw mode: mean 0 and the identity, no fallback', () => {
    const acc = new CovarianceAccumulator(3);
    acc.add([0.6, 0.8, 0]);
    acc.add([0, 0.6, 0.8]);
    const w = fitWhitening(acc, 'raw');
    expect([w.mode, w.fallback]).toEqual(['raw', null]);
    expect(Array.from(w.matrix)).toEqual([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    expect(Array.from(w.mean)).toEqual([0, 0, 0]);
    expect(fitWhitening(acc, 'zca')).toMatchObject({ mode: 'zca', fallback: null });
  });

  it('a pool of one distinct answer falls back to raw, recorded, and its unanimous population has m = q = 1', () => {
    const d = 384;
    const rng = rngFrom(9);
    const answer = Float32Array.from(unit(Array.from({ length: d }, () => rng.next() - 0.5)));
    // Sixteen agents, added once with their count (as the corpus does) or one by one past d samples.
    const once = new CovarianceAccumulator(d);
    once.add(answer, 16);
    const oneByOne = new CovarianceAccumulator(d);
    for (let i = 0; i < d + 20; i++) oneByOne.add(answer);
    for (const acc of [once, oneByOne]) {
      expect(acc.varied).toBe(false);
      const w = fitWhitening(acc, 'zca');
      expect([w.mode, w.fallback, w.lambda]).toEqual(['raw', 'degenerate_pool', 0]);
      expect(w.samples).toBe(acc.count);
      const spin = toSpin(w, answer);
      expect(Math.hypot(...spin)).toBeCloseTo(1, 12);
      const spins = Array.from({ length: 16 }, () => spin);
      const tags = Array<Tag>(16).fill('correct');
      const m = measureSnapshot(
        spins,
        spins.map(() => answer),
        tags,
        d,
      );
      expect(m.magnetisation).toBeCloseTo(1, 12);
      expect(m.cohesion).toBeCloseTo(1, 12);
      expect(m.cds_sys).toBeCloseTo(0, 6);
    }
  });

  it('without the fallback the same pool would centre every answer on the mean: the zero spin it replaces', () => {
    const acc = new CovarianceAccumulator(2);
    acc.add([0.6, 0.8], 5);
    const centred = {
      mode: 'zca' as const,
      fallback: null,
      dim: 2,
      samples: 5,
      lambda: 0,
      mean: acc.finish().mean,
      matrix: Float64Array.of(1, 0, 0, 1),
    };
    expect(Array.from(toSpin(centred, [0.6, 0.8]))).toEqual([0, 0]);
    expect(Array.from(toSpin(fitWhitening(acc, 'zca'), [0.6, 0.8]))).toEqual([0.6 / Math.hypot(0.6, 0.8), 0.8 / Math.hypot(0.6, 0.8)]);
  });

  it('two distinct answers whiten as zca; no unit answer is the mean, so no spin is zero', () => {
    const d = 8;
    const rng = rngFrom(10);
    const a = unit(Array.from({ length: d }, () => rng.next() - 0.5));
    const b = unit(Array.from({ length: d }, () => rng.next() - 0.5));
    const acc = new CovarianceAccumulator(d);
    acc.add(a, 15);
    acc.add(b, 1);
    expect(acc.varied).toBe(true);
    const w = fitWhitening(acc, 'zca');
    expect([w.mode, w.fallback]).toEqual(['zca', null]);
    for (const x of [a, b]) expect(Math.hypot(...toSpin(w, x))).toBeCloseTo(1, 12);
    // A unanimous snapshot of either answer still has m = q = 1 under the pool's zca.
    const spins = Array.from({ length: 4 }, () => toSpin(w, b));
    const m = measureSnapshot(spins, spins, Array<Tag>(4).fill('hallucinated'), d);
    expect([m.magnetisation, m.cohesion].map((x) => Number(x.toFixed(12)))).toEqual([1, 1]);
  });

  it('an empty pool (no t = 0 answer) falls back to raw as well', () => {
    const w = fitWhitening(new CovarianceAccumulator(3), 'zca');
    expect([w.mode, w.fallback, w.samples]).toEqual(['raw', 'degenerate_pool', 0]);
  });
});

import { DEFAULT_TEMPLATE, parseTemplate, promptLength, renderPrompt } from '../src/index.js';

describe('prompt rendering', () => {
  const custom = parseTemplate(
    'system: S {{k}}\ninitial: "Q: {{question}} T={{T}}"\nupdate: "{{question}} | {{previous}} | {{neighbours}} | {{neighbours}} t={{t}} k={{k}}"\nneighbour: "[{{index}}] {{answer}}"\nno_neighbours: none\n',
    't.yaml',
  );
  const contexts = [
    { question: 'How old?', sweep: 0, temperature: 0.7, neighbourAgents: [], neighbourAnswers: [] },
    {
      question: 'How old?',
      sweep: 3,
      temperature: 1.3,
      previous: 'The answer is 96.',
      neighbourAgents: [4, 17, 1023],
      neighbourAnswers: ['I am not sure.', '96', 'Möglich: 95 ✓'],
    },
    { question: 'Q', sweep: 1, temperature: 0, previous: '', neighbourAgents: [], neighbourAnswers: [] },
    {
      question: 'Q',
      sweep: 12,
      temperature: 0.1,
      previous: 'x',
      neighbourAgents: [0, 9, 10, 99_999, 1_000_000],
      neighbourAnswers: ['a', 'b', 'c', 'd', ''],
    },
  ];
  it('promptLength equals the length of the rendered messages', () => {
    for (const template of [DEFAULT_TEMPLATE, custom]) {
      for (const ctx of contexts) {
        const m = renderPrompt(template, ctx);
        expect(promptLength(template, ctx)).toEqual({ system: m.system.length, user: m.user.length });
      }
    }
  });
  it('shared text comes first and neighbours keep prompt order', () => {
    const m = renderPrompt(DEFAULT_TEMPLATE, contexts[1]);
    expect(m.user.startsWith('Question: How old?')).toBe(true);
    expect(m.user.indexOf('Agent 4: I am not sure.')).toBeLessThan(m.user.indexOf('Agent 17: 96'));
    expect(renderPrompt(custom, contexts[2]).user).toBe('Q |  | none | none t=1 k=0');
  });
  it('rejects unknown slots', () => {
    expect(() => parseTemplate('system: s\ninitial: "{{qestion}}"\nupdate: u\nneighbour: n\n', 'bad.yaml')).toThrow(
      /bad.yaml: unknown slot \{\{qestion\}\}/,
    );
  });
});
