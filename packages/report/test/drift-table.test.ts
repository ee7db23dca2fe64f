import { describe, expect, it } from 'vitest';
import type { OrderParamRow } from '@panta/corpus';
import { driftTable } from '../src/index.js';
import type { CorpusData, RunInfo } from '../src/corpus-data.js';

const N = 16;

/** A run of one arm whose snapshots have `correct[t]` correct answers and the rest not known. */
function run(id: string, protocol: string, dynamics: string, correct: number[]) {
  const info = {
    run_id: id,
    config_id: id.replace(/-t\d$/, ''),
    trial: 0,
    prompt_id: 'p',
    geometry: 'ring',
    n: N,
    k: 2,
    temperature: 0.5,
    protocol,
    dynamics,
    status: 'complete',
  } as unknown as RunInfo;
  const rows = correct.map(
    (c, sweep): OrderParamRow => ({
      run_id: id,
      config_id: info.config_id,
      sweep,
      encoder: 'h',
      magnetisation: 0.5,
      cohesion: 0.2,
      rho: c > 0 ? 0 : null,
      delta_rho: null,
      n_correct: c,
      n_hallucinated: 0,
      n_not_known: N - c,
      n_judge_failure: 0,
      cds_sys: 0.5,
    }),
  );
  return { info, rows };
}

function corpus(runs: ReturnType<typeof run>[], spec: object): CorpusData {
  return {
    dir: '/nowhere',
    manifest: { spec, runs: { planned: runs.length }, backend: { kind: 'surrogate', model: 's' } } as unknown as CorpusData['manifest'],
    runs: runs.map((r) => r.info),
    orderParams: runs.flatMap((r) => r.rows),
    encoders: ['h'],
    provisional: true,
    notes: [],
    events: null,
  };
}

describe('drift table', () => {
  // Glauber slides from 14 to 3 correct (rho stays 0: the rest say "not known"); isolated only wobbles by one agent.
  const slide = [14, 14, 5, 3, 3];
  const wobble = [12, 13, 12, 11, 12];
  const runs = [
    run('p-ring-n16-T0.5-glauber-t0', 'glauber', 'asynchronous', slide),
    run('p-ring-n16-T0.5-glauber-t1', 'glauber', 'asynchronous', slide),
    run('p-ring-n16-T0.5-isolated-t0', 'isolated', 'asynchronous', wobble),
    run('p-ring-n16-T0.5-isolated-sync-t0', 'isolated', 'synchronous', wobble),
  ];

  it('has a row per arm (protocol and dynamics), never pooling them, and counts a slide into "not known" as drift', () => {
    const table = driftTable(corpus(runs, { protocol: ['glauber', 'isolated'] }));
    expect(table.columns).toEqual([
      'prompt',
      'geometry',
      'T',
      'protocol',
      'dynamics',
      'runs',
      'FOCUS (mean)',
      'drifted runs',
      'drift onset (mean sweep)',
      'recovery share',
    ]);
    expect(table.rows).toEqual([
      ['p', 'ring', '0.5', 'glauber', 'asynchronous', 2, -0.6875, 2, 2, 0],
      ['p', 'ring', '0.5', 'isolated', 'asynchronous', 1, 0, 0, null, null],
      ['p', 'ring', '0.5', 'isolated', 'synchronous', 1, 0, 0, null, null],
    ]);
    expect(table.caption).toMatch(/tolerance \(2\/√N, four binomial standard errors of an accuracy over N agents\)/);
  });

  it("uses the spec's tolerance: 0 makes a one-agent wobble drift", () => {
    const table = driftTable(corpus(runs.slice(2, 3), { drift: { tolerance: 0 } }));
    expect(table.columns).toEqual([
      'prompt',
      'geometry',
      'T',
      'runs',
      'FOCUS (mean)',
      'drifted runs',
      'drift onset (mean sweep)',
      'recovery share',
    ]);
    // best 13/16 at t = 1; 12/16 and 11/16 below it at t = 2 and 3; 12/16 at t = 4 does not get back to 13/16.
    expect(table.rows).toEqual([['p', 'ring', '0.5', 1, 0, 1, 2, 0]]);
    expect(table.caption).toMatch(/tolerance \(0\)/);
  });
});
