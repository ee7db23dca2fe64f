import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { ROOT, pantaInProcess as panta, tempDir, writeSpec } from './helpers.js';

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

describe('examples/ssvp-arms.yaml', () => {
  it('runs (cut to 2 trials), verifies, compares the arms with Welch t and Cohen d, calibrates tau on no-sync, and a spec using {calibrate, from} runs', async () => {
    const dir = tempDir();
    const text = read('examples/ssvp-arms.yaml')
      .replace('../datasets/', `${ROOT}/datasets/`)
      .replace('file: ssvp-beliefs.jsonl', `file: ${ROOT}/examples/ssvp-beliefs.jsonl`)
      .replace(/^trials: 10$/m, 'trials: 2');
    expect(text).toMatch(/^trials: 2$/m);
    const out = join(dir, 'ssvp-arms');
    const r = await panta(['run', writeSpec(dir, text), '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/complete: 6\/6 runs/);
    expect((await panta(['verify', out])).code).toBe(0);
    const stats = await queryRows(
      `SELECT arm_a, arm_b, n_a, n_b FROM read_parquet('${out}/stats.parquet') WHERE metric = 'rho_final' ORDER BY ALL`,
    );
    expect(stats).toEqual([
      { arm_a: 'no-sync', arm_b: 'full-broadcast', n_a: 2, n_b: 2 },
      { arm_a: 'no-sync', arm_b: 'ssvp', n_a: 2, n_b: 2 },
      { arm_a: 'ssvp', arm_b: 'full-broadcast', n_a: 2, n_b: 2 },
    ]);
    const report = join(dir, 'report');
    expect((await panta(['report', out, '--out', report])).code).toBe(0);
    expect(readFileSync(join(report, 'tables', 'arm-tests.csv'), 'utf8')).toMatch(/,rho_final,no-sync,full-broadcast,/);
    const cal = await panta(['calibrate-tau', out, '--fp', '0.02']);
    expect(cal.code, cal.stderr).toBe(0);
    expect(cal.stdout).toMatch(/arm no-sync, 384 updates of 2 runs/);
    const tau = /^tau = (\d\.\d\d): /m.exec(cal.stdout)![1];
    const calibrated = join(dir, 'calibrated');
    const spec = writeSpec(
      dir,
      text
        .replace('ssvp: {tau: 0.25}', `ssvp: {tau: {calibrate: 0.02, from: ${out}}}`)
        .replace('protocol: [no-sync, ssvp, full-broadcast]', 'protocol: ssvp')
        // one run is enough to show the calibrated tau in its manifest
        .replace(/^trials: 2$/m, 'trials: 1'),
      'calibrated.yaml',
    );
    expect((await panta(['run', spec, '--out', calibrated])).code).toBe(0);
    expect(JSON.parse(readFileSync(join(calibrated, 'manifest.json'), 'utf8')).spec.ssvp.tau).toBe(Number(tau));
    expect((await panta(['verify', calibrated])).code).toBe(0);
  }, 300_000);
});
