import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows, verifyCorpus } from '@panta/corpus';
import { RHEON6, panta, pantaInProcess as cli, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

const SPEC = (name: string, protocol: string, tau: string) => `name: ${name}
dataset: ${RHEON6}
prompts: [fq367]
geometries: [ring]
sizes: [8]
temperatures: [1.0]
trials: 2
sweeps: 3
seed: 3
protocol: ${protocol}
ssvp: {tau: ${tau}}
`;

// Each test runs the binary once (its exit status and streams); its other commands run the CLI in this process.

// The paper calibrates on the no-sync arm: summaries written and measured, never merged.
const ARM = 'no-sync';

describe('panta calibrate-tau', () => {
  it('prints the lowest tau below the bound with the shares around it, keeps the distribution, and a spec using {calibrate, from} runs with that tau', async () => {
    const dir = tempDir();
    const source = join(dir, 'source');
    await runSweep(writeSpec(dir, SPEC('source', `[glauber, ${ARM}, full-broadcast]`, '0.25'), 'source.yaml'), {
      out: source,
      logLevel: 'silent',
    });
    const r = panta(['calibrate-tau', source, '--fp', '0.2']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`arm ${ARM}, 48 updates of 2 runs, gate CDS on encoder hashing$`));
    expect(lines[1]).toBe('tau\tabove tau\tfalse-positive share');
    const tau = Number(/^tau = (\d\.\d\d): /m.exec(r.stdout)![1]);
    expect(lines.find((l) => l.includes(' *'))).toMatch(new RegExp(`^${tau.toFixed(2)} \\*\\t`));
    // The printed choice, checked against the events by hand: the share above tau is below 20%, above tau - 0.01 not.
    const cds = (
      await queryRows(
        `SELECT divergence FROM read_parquet('${source}/events/*.parquet') WHERE protocol = '${ARM}' AND role = 'agent' AND sweep >= 1`,
      )
    ).map((x) => Number(x.divergence));
    expect(cds).toHaveLength(48);
    const share = (t: number) => cds.filter((v) => v > t).length / cds.length;
    expect(share(tau)).toBeLessThan(0.2);
    if (tau > 0) expect(share(Math.round(100 * tau - 1) / 100)).toBeGreaterThanOrEqual(0.2);
    expect(existsSync(join(source, 'tau-calibration.json'))).toBe(true);
    // The source still verifies: the calibration is beside the corpus, not in it.
    expect((await verifyCorpus(source)).problems).toEqual([]);

    // A spec that takes its tau from the calibration, at its own bound, gets the number the command printed.
    const calibrated = join(dir, 'calibrated');
    const spec = writeSpec(dir, SPEC('calibrated', 'ssvp', '{calibrate: 0.2, from: source}'), 'calibrated.yaml');
    const run = await runSweep(spec, { out: calibrated, logLevel: 'silent' });
    expect(run.status).toBe('complete');
    const manifest = JSON.parse(readFileSync(join(calibrated, 'manifest.json'), 'utf8')) as { spec: { ssvp: { tau: unknown } } };
    expect(manifest.spec.ssvp.tau).toBe(tau);
    expect((manifest as { tau_calibration?: unknown }).tau_calibration).toEqual({
      from: source,
      arm: ARM,
      calibrate: 0.2,
      encoder: 'hashing',
      tau,
    });
    expect((await verifyCorpus(calibrated)).problems).toEqual([]);

    // Another arm's calibration is kept beside the first, not in its place; the printed snippet, pasted into a
    // spec in another folder (from is read relative to the spec), runs at that arm's tau and the manifest says so.
    const fb = await cli(['calibrate-tau', source, '--fp', '0.2', '--arm', 'full-broadcast']);
    expect(fb.code, fb.stderr).toBe(0);
    const fbTau = Number(/^tau = (\d\.\d\d): /m.exec(fb.stdout)![1]);
    const snippet = /a spec uses it with ssvp: (\{tau: .*\})$/m.exec(fb.stdout)![1];
    expect(snippet).toBe(`{tau: {calibrate: 0.2, from: ${source}, arm: full-broadcast}}`);
    const stored = JSON.parse(readFileSync(join(source, 'tau-calibration.json'), 'utf8')) as { arms: Record<string, unknown> };
    expect(Object.keys(stored.arms).sort()).toEqual(['full-broadcast', ARM]);
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    const pasted = writeSpec(elsewhere, SPEC('pasted', 'ssvp', snippet.slice('{tau: '.length, -1)), 'pasted.yaml');
    const fbRun = await runSweep(pasted, { out: join(dir, 'pasted'), logLevel: 'silent' });
    expect(fbRun.status).toBe('complete');
    const fbManifest = JSON.parse(readFileSync(join(dir, 'pasted', 'manifest.json'), 'utf8'));
    expect(fbManifest.spec.ssvp.tau).toBe(fbTau);
    expect(fbManifest.tau_calibration).toMatchObject({ from: source, arm: 'full-broadcast', tau: fbTau });
    // The no-sync spec still reads no-sync's numbers, and an arm never calibrated is named.
    expect((await runSweep(spec, { out: join(dir, 'again'), logLevel: 'silent' })).status).toBe('complete');
    expect(JSON.parse(readFileSync(join(dir, 'again', 'manifest.json'), 'utf8')).spec.ssvp.tau).toBe(tau);
    const noArm = await cli([
      'run',
      writeSpec(dir, SPEC('x', 'ssvp', '{calibrate: 0.2, from: source, arm: ssvp}'), 'x.yaml'),
      '--out',
      join(dir, 'x'),
    ]);
    expect(noArm.code).toBe(2);
    expect(noArm.stderr).toMatch(
      /x\.yaml: ssvp\.tau\.arm: .*tau-calibration\.json has no calibration of the arm ssvp \(calibrated: no-sync, full-broadcast\); fix: run panta calibrate-tau source --arm ssvp first\n$/,
    );
  }, 240_000);

  it('says in one line, exit 2, what is wrong: no such arm, a folder that is not a corpus, a spec whose source was never calibrated', async () => {
    const dir = tempDir();
    const source = join(dir, 'source');
    await runSweep(writeSpec(dir, SPEC('source', 'glauber', '0.25'), 'source.yaml'), { out: source, logLevel: 'silent' });
    const noArm = panta(['calibrate-tau', source]);
    expect(noArm.code).toBe(2);
    expect(noArm.stderr.trim().split('\n')).toHaveLength(1);
    expect(noArm.stderr).toMatch(/protocol: has no run of the arm no-sync \(arms: glauber\); fix: /);
    const glauber = await cli(['calibrate-tau', source, '--arm', 'glauber']);
    expect(glauber.code).toBe(2);
    expect(glauber.stderr).toMatch(/divergence: the glauber arm's updates carry no CDS/);
    const notCorpus = await cli(['calibrate-tau', dir]);
    expect(notCorpus.code).toBe(2);
    expect(notCorpus.stderr).toMatch(/not a Panta corpus/);
    const badFp = await cli(['calibrate-tau', source, '--fp', '0']);
    expect(badFp.code).toBe(2);
    const spec = writeSpec(dir, SPEC('calibrated', 'ssvp', '{calibrate: 0.02, from: source}'), 'calibrated.yaml');
    const refused = await cli(['run', spec, '--out', join(dir, 'calibrated')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toMatch(
      /calibrated\.yaml: ssvp\.tau\.from: .*source has no tau-calibration\.json; fix: run panta calibrate-tau source first/,
    );
    expect(existsSync(join(dir, 'calibrated'))).toBe(false);
  }, 240_000);
});
