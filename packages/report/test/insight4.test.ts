import { describe, expect, it } from 'vitest';
import type { OrderParamRow } from '@panta/corpus';
import { cohesionAccuracyTable, truncationTable } from '../src/index.js';
import type { CorpusData, RunInfo } from '../src/corpus-data.js';
import { pearsonFisher, spreadBand } from '../src/stats.js';

/**
 * Four runs on a 4-ring, two configurations of two trials, sweeps 0..2; run D stopped early after sweep 1:
 *
 *   run (config, trial)  m(0) m(1) m(2)   ρ(0) ρ(1) ρ(2)   q(0) q(final)
 *   A   (c1, 0)          .2   .6   .8     .5   .25  0      .1   .9
 *   B   (c1, 1)          .4   .8   .6     .5   .5   .25    .2   .7
 *   C   (c2, 0)          .2   .5   .5     1    .5   .5     .3   .5
 *   D   (c2, 1)          .3   .7   -      .75  .25  -      .4   .6
 */
const RUNS: { id: string; config: string; trial: number; m: number[]; rho: number[]; q: [number, number] }[] = [
  { id: 'A', config: 'c1', trial: 0, m: [0.2, 0.6, 0.8], rho: [0.5, 0.25, 0], q: [0.1, 0.9] },
  { id: 'B', config: 'c1', trial: 1, m: [0.4, 0.8, 0.6], rho: [0.5, 0.5, 0.25], q: [0.2, 0.7] },
  { id: 'C', config: 'c2', trial: 0, m: [0.2, 0.5, 0.5], rho: [1, 0.5, 0.5], q: [0.3, 0.5] },
  { id: 'D', config: 'c2', trial: 1, m: [0.3, 0.7], rho: [0.75, 0.25], q: [0.4, 0.6] },
];

function corpus(spread?: 'sd' | 'se', extraPrompt = false): CorpusData {
  const runs = RUNS.map(
    (r) =>
      ({
        run_id: r.id,
        config_id: r.config,
        trial: r.trial,
        prompt_id: 'p',
        geometry: 'ring',
        n: 4,
        k: 2,
        temperature: 0.5,
        protocol: 'glauber',
        dynamics: 'asynchronous',
        status: 'complete',
      }) as unknown as RunInfo,
  );
  const rows = RUNS.flatMap((r) =>
    r.m.map(
      (m, sweep): OrderParamRow => ({
        run_id: r.id,
        config_id: r.config,
        sweep,
        encoder: 'e',
        magnetisation: m,
        cohesion: sweep === 0 ? r.q[0] : sweep === r.m.length - 1 ? r.q[1] : 0.5,
        rho: r.rho[sweep],
        delta_rho: r.rho[sweep] - r.rho[0],
        n_correct: 0,
        n_hallucinated: 0,
        n_not_known: 0,
        n_judge_failure: 0,
        cds_sys: 0.5,
      }),
    ),
  );
  // A run of an excluded prompt, whose numbers would change every cell were it pooled.
  if (extraPrompt) {
    runs.push({ ...runs[0], run_id: 'X', config_id: 'x1', prompt_id: 'ex' } as RunInfo);
    for (const sweep of [0, 1, 2])
      rows.push({ ...rows[0], run_id: 'X', config_id: 'x1', sweep, magnetisation: 0, cohesion: 0, rho: 1, delta_rho: 0 });
  }
  return {
    dir: '/nowhere',
    manifest: { spec: { sweeps: 2, geometries: ['ring'] } } as unknown as CorpusData['manifest'],
    runs,
    orderParams: rows,
    encoders: ['e'],
    provisional: false,
    notes: [],
    events: null,
    ...(spread ? { spread } : {}),
    ...(extraPrompt ? { excludePrompts: ['ex'], excludeSource: '--exclude-prompts' } : {}),
  };
}

const SD = Math.sqrt(0.02); // sd of {.8, .6} and of {.5, .7}
const SD_RHO = Math.sqrt(0.03125); // sd of {0, .25} and of {.5, .25}

describe('truncation table: what stopping at t = k would have cost (worked out by hand)', () => {
  it('k = 0 and k = 1: |Δm|, |Δρ| per run and per configuration, the trial sd of the finals, calls saved', () => {
    const t = truncationTable(corpus());
    expect(t.columns).toEqual([
      't = k',
      'calls saved %',
      'runs',
      '|Δm| per run',
      '|Δm̄| per configuration',
      'SD of m (final)',
      '|Δρ| per run',
      '|Δρ̄| per configuration',
      'SD of ρ (final)',
    ]);
    expect(t.rows).toHaveLength(2);
    const [k0, k1] = t.rows as number[][];
    // calls: full 4·3 + 4·3 + 4·3 + 4·2 = 44; saved at k = 0: 4·(2 + 2 + 2 + 1) = 28; at k = 1: 4·(1 + 1 + 1 + 0) = 12
    expect(k0[0]).toBe(0);
    expect(k0[1]).toBeCloseTo((100 * 28) / 44, 12);
    expect(k0[2]).toBe(4);
    // |Δm| per run at k = 0: .6, .2, .3, .4; per configuration: c1 |.3 − .7| = .4, c2 |.25 − .6| = .35
    expect(k0[3]).toBeCloseTo(0.375, 12);
    expect(k0[4]).toBeCloseTo(0.375, 12);
    expect(k0[5]).toBeCloseTo(SD, 12);
    // |Δρ| per run: .5, .25, .5, .5; per configuration: c1 |.5 − .125| = .375, c2 |.875 − .375| = .5
    expect(k0[6]).toBeCloseTo(0.4375, 12);
    expect(k0[7]).toBeCloseTo(0.4375, 12);
    expect(k0[8]).toBeCloseTo(SD_RHO, 12);
    // k = 1: D has stopped (nothing saved, no difference); |Δm| .2, .2, 0, 0; configuration means equal; ρ: c1 .25, c2 0
    expect(k1[1]).toBeCloseTo((100 * 12) / 44, 12);
    expect(k1[3]).toBeCloseTo(0.1, 12);
    expect(k1[4]).toBeCloseTo(0, 12);
    expect(k1[6]).toBeCloseTo(0.125, 12);
    expect(k1[7]).toBeCloseTo(0.125, 12);
    expect(t.caption).toMatch(/6\/11 = 54\.5%/);
    expect(t.caption).toMatch(/one sd \(the paper's; --spread se gives the standard error\)/);
  });

  it('--spread se: the yardstick is the standard error (sd/√2 with two trials), and the caption says so', () => {
    const t = truncationTable(corpus('se'));
    expect(t.columns[5]).toBe('SE of m (final)');
    expect((t.rows[0] as number[])[5]).toBeCloseTo(0.1, 12);
    expect((t.rows[0] as number[])[8]).toBeCloseTo(0.125, 12);
    expect(t.caption).toMatch(/one se \(--spread se; the paper's is the sd\)/);
  });

  it("pools the main text's prompts: an excluded prompt is left out and named", () => {
    const t = truncationTable(corpus(undefined, true));
    expect((t.rows[0] as number[])[2]).toBe(4);
    expect((t.rows[0] as number[])[3]).toBeCloseTo(0.375, 12);
    expect(t.caption).toMatch(/excluded from this pooled analysis: ex/);
  });
});

describe('cohesion-accuracy correlation per geometry (worked out by hand)', () => {
  it("t = 0: r = −.0625/√(.05·.171875) = −0.6742; final: r = .1/√(.0875·.125) = 0.9562; 95% intervals by Fisher's z", () => {
    const t = cohesionAccuracyTable(corpus());
    expect(t.rows).toHaveLength(1);
    const [g, n0, r0, lo0, hi0, n1, r1, lo1, hi1] = t.rows[0] as [string, ...number[]];
    expect(g).toBe('ring');
    expect([n0, n1]).toEqual([4, 4]);
    // q(0) = .1 .2 .3 .4 against 1 − ρ(0) = .5 .5 0 .25
    expect(r0).toBeCloseTo(-0.0625 / Math.sqrt(0.05 * 0.171875), 12);
    expect(r0).toBeCloseTo(-0.6742, 5);
    // n = 4: se of z = 1/√(4 − 3) = 1, the interval tanh(atanh(r) ± 1.959964)
    expect(lo0).toBeCloseTo(Math.tanh(Math.atanh(r0) - 1.959963984540054), 12);
    expect(hi0).toBeCloseTo(Math.tanh(Math.atanh(r0) + 1.959963984540054), 12);
    expect([lo0, hi0].map((x) => Number(x.toFixed(4)))).toEqual([-0.9923, 0.8149]);
    // final q = .9 .7 .5 .6 (D's at its last sweep, 1) against 1 − ρ = 1 .75 .5 .75
    expect(r1).toBeCloseTo(0.1 / Math.sqrt(0.0875 * 0.125), 12);
    expect(r1).toBeCloseTo(0.956183, 5);
    expect([lo1, hi1].map((x) => Number(x.toFixed(4)))).toEqual([-0.0605, 0.9991]);
    expect(t.caption).toMatch(/95% by Fisher's z/);
  });

  it('no interval below four runs or at |r| = 1; r undefined when a side is constant', () => {
    expect(pearsonFisher([1, 2, 3], [1, 3, 2])).toEqual({ r: 0.5, lo: null, hi: null, n: 3 });
    expect(pearsonFisher([1, 2, 3, 4], [2, 4, 6, 8])).toMatchObject({ r: 1, lo: null, hi: null });
    expect(pearsonFisher([1, 2, 3, 4], [1, 1, 1, 1]).r).toBeNull();
  });
});

describe('the spread over trials', () => {
  it('sd is the sample sd, se = sd/√n: .5 and .75 give ± .176777 and ± .125', () => {
    expect(spreadBand([0.5, 0.75], 'sd')).toMatchObject({ mean: 0.625, n: 2 });
    expect(spreadBand([0.5, 0.75], 'sd').lo).toBeCloseTo(0.625 - Math.sqrt(0.03125), 12);
    expect(spreadBand([0.5, 0.75], 'se').hi).toBeCloseTo(0.75, 12);
    expect(spreadBand([0.5], 'sd').lo).toBeNull();
  });
});
