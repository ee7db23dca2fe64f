import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '@panta/core';
import { queryRows, readManifest, readWhitening, verifyCorpus, whiteningPath } from '@panta/corpus';
import { ROOT, RHEON6, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { loadSweep, runSweep } from '../src/index.js';

const BASE = `dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring]
sizes: [8]
temperatures: [0.4, 1.3]
trials: 1
sweeps: 2
seed: 11
`;

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

interface Row {
  run_id: string;
  sweep: number;
  magnetisation: number;
  cohesion: number;
}

async function orderParams(out: string): Promise<Map<string, Row>> {
  const rows = (await queryRows(
    `SELECT run_id, sweep::INTEGER AS sweep, magnetisation, cohesion FROM read_parquet('${out}/order_params.parquet')`,
  )) as unknown as Row[];
  return new Map(rows.map((r) => [`${r.run_id}|${r.sweep}`, r]));
}

describe('comparable arms: one whitening per prompt and encoder across the arms of a sweep', () => {
  const dir = tempDir('panta-arms-');
  const both = join(dir, 'both');
  beforeAll(async () => {
    await runSweep(writeSpec(dir, `name: both\n${BASE}dynamics: [asynchronous, synchronous]\n`, 'both.yaml'), { out: both });
  });

  it('dynamics: [asynchronous, synchronous] fits exactly one whitening per (prompt, encoder), pooled over both arms', async () => {
    expect(readdirSync(join(both, 'whitening')).sort()).toEqual(['fq117__hashing.parquet', 'fq367__hashing.parquet']);
    // 2 temperatures x 2 arms x N = 8 initial answers per prompt
    for (const p of ['fq117', 'fq367']) expect((await readWhitening(both, p, 'hashing')).samples).toBe(32);
    const runs = await queryRows(`SELECT run_id, dynamics FROM read_parquet('${both}/runs.parquet') ORDER BY run_id`);
    expect(runs.filter((r) => r.dynamics === 'synchronous').map((r) => r.run_id)).toEqual([
      'fq117-ring-n8-T0.4-glauber-sync-t0',
      'fq117-ring-n8-T1.3-glauber-sync-t0',
      'fq367-ring-n8-T0.4-glauber-sync-t0',
      'fq367-ring-n8-T1.3-glauber-sync-t0',
    ]);
    expect(readManifest(both)?.whitening).toEqual({ source: 'fitted', mode: 'zca' });
  });

  it('m and q of an arm equal those of a sweep of that arm alone given the same whitening (whitening: {from})', async () => {
    const alone = join(dir, 'sync-from');
    writeSpec(dir, `name: sync-from\n${BASE}dynamics: synchronous\nwhitening: {from: both}\n`, 'sync-from.yaml');
    await runSweep(join(dir, 'sync-from.yaml'), { out: alone });
    const pooled = await orderParams(both);
    const own = await orderParams(alone);
    expect(own.size).toBe(4 * 3); // 4 runs x sweeps 0..2
    for (const [key, row] of own) {
      expect(key).toMatch(/-sync-t0\|/);
      expect([key, row.magnetisation, row.cohesion]).toEqual([key, pooled.get(key)!.magnetisation, pooled.get(key)!.cohesion]);
    }
    // The copies are the other corpus's files, byte for byte, and the manifest says where they came from.
    const manifest = readManifest(alone)!;
    const files: Record<string, string> = {};
    for (const p of ['fq117', 'fq367']) {
      expect(sha(whiteningPath(alone, p, 'hashing'))).toBe(sha(whiteningPath(both, p, 'hashing')));
      files[`${p}__hashing`] = sha(whiteningPath(both, p, 'hashing'));
    }
    expect(manifest.whitening).toEqual({
      source: 'corpus',
      corpus: both,
      name: 'both',
      fingerprint: readManifest(both)!.fingerprint,
      files,
    });
    expect((await verifyCorpus(alone)).problems).toEqual([]);

    // Fitted on its own t = 0 answers alone, the same runs read another m: what the shared whitening avoids.
    const fitted = join(dir, 'sync-fitted');
    await runSweep(writeSpec(dir, `name: sync-fitted\n${BASE}dynamics: synchronous\n`, 'sync-fitted.yaml'), { out: fitted });
    const key = 'fq117-ring-n8-T0.4-glauber-sync-t0|0';
    expect((await orderParams(fitted)).get(key)!.magnetisation).not.toBe(own.get(key)!.magnetisation);
  });

  it('another corpus without a prompt or an encoder of this sweep, or with another dimension, is refused in one line before anything runs', () => {
    const refuse = (name: string, extra: string, message: RegExp) => {
      const spec = writeSpec(dir, `name: ${name}\n${BASE}${extra}`, `${name}.yaml`);
      let error: unknown;
      try {
        loadSweep(spec, { out: join(dir, name) });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InputError);
      expect((error as Error).message).toMatch(message);
    };
    refuse(
      'other-encoder',
      'encoders: [{name: lexical, kind: hashing}]\nwhitening: {from: both}\n',
      /whitening\.from: .* has no encoder "lexical" \(it has hashing\); fix: /,
    );
    refuse(
      'other-dim',
      'encoders: [{name: hashing, kind: hashing, dim: 256}]\nwhitening: {from: both}\n',
      /whitening\.from: encoder "hashing" has dimension 256 here and 384 in .*; fix: use the same encoder/,
    );
    refuse('not-a-corpus', 'whitening: {from: nowhere}\n', /whitening\.from: .*nowhere is not a folder; fix: /);
  });

  it('panta run exits 2 with one line naming the spec and whitening.from, and writes nothing', () => {
    const other = loadPromptIds().find((id) => id !== 'fq117' && id !== 'fq367')!;
    const spec = writeSpec(dir, `name: missing\n${BASE.replace('fq367', other)}whitening: {from: both}\n`, 'missing.yaml');
    const r = panta(['run', spec, '--out', join(dir, 'missing-out')], ROOT);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`missing\\.yaml: whitening\\.from: .*has no whitening for prompt ${other} and encoder hashing; fix: `),
    );
    expect(() => readdirSync(join(dir, 'missing-out'))).toThrow();
  });
});

describe('whitening: {from} and an onnx encoder', () => {
  it('its dimension, known once the model is opened, is checked before anything is written (one line, exit 2)', async () => {
    const dir = tempDir('panta-arms-');
    const source = join(dir, 'source');
    await runSweep(writeSpec(dir, `name: source\n${BASE}encoders: [{name: tiny, kind: hashing, dim: 384}]\n`, 'source.yaml'), {
      out: source,
    });
    const tiny = join(ROOT, 'packages', 'embed', 'test', 'fixtures', 'tiny-encoder');
    const spec = writeSpec(
      dir,
      `name: onnx\n${BASE}encoders: [{name: tiny, kind: onnx, path: ${tiny}}]\nwhitening: {from: source}\n`,
      'onnx.yaml',
    );
    const out = join(dir, 'onnx-out');
    const r = panta(['run', spec, '--out', out], ROOT);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/onnx\.yaml: whitening\.from: encoder "tiny" has dimension \d+ here and 384 in .*; fix: /);
    expect(existsSync(out)).toBe(false);
  });
});

describe('fingerprint: adding an arm is another sweep', () => {
  it('a single value is the sweep it was; a list (even of that value) is another, and a resume into it is refused', async () => {
    const dir = tempDir('panta-arms-');
    const fp = (extra: string, name: string) => loadSweep(writeSpec(dir, `name: fp\n${BASE}${extra}`, `${name}.yaml`)).fingerprint;
    const plain = fp('', 'plain');
    expect(fp('dynamics: asynchronous\n', 'single')).toBe(plain);
    const list = fp('dynamics: [asynchronous, synchronous]\n', 'list');
    expect(list).not.toBe(plain);
    expect(fp('template: [rheon-a2]\n', 'tpl')).not.toBe(plain);
    const out = join(dir, 'out');
    await runSweep(join(dir, 'plain.yaml'), { out });
    const r = panta(['run', join(dir, 'list.yaml'), '--out', out], ROOT);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/holds a corpus of a different sweep/);
  });
});

function loadPromptIds(): string[] {
  return readFileSync(RHEON6, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { id: string }).id);
}

describe('template and population arms', () => {
  it('a sweep runs every arm with its own template and population, and runs.parquet names them', async () => {
    const dir = tempDir('panta-arms-');
    const out = join(dir, 'out');
    const beliefs = join(ROOT, 'examples', 'beliefs.jsonl');
    await runSweep(
      writeSpec(
        dir,
        `name: arms\n${BASE.replace('temperatures: [0.4, 1.3]', 'temperatures: [0.7]').replace('prompts: [fq117, fq367]', 'prompts: [fq117]')}` +
          `template: [rheon-a2, panta-v1]\npopulation: [{name: none}, {name: probe, file: ${beliefs}, assign: same}]\n`,
      ),
      { out },
    );
    const runs = await queryRows(`SELECT run_id, template_arm, population_arm FROM read_parquet('${out}/runs.parquet') ORDER BY run_id`);
    expect(runs.map((r) => [r.run_id, r.template_arm, r.population_arm])).toEqual([
      ['fq117-ring-n8-T0.7-glauber-tpl-panta-v1-pop-none-t0', 'panta-v1', 'none'],
      ['fq117-ring-n8-T0.7-glauber-tpl-panta-v1-pop-probe-t0', 'panta-v1', 'probe'],
      ['fq117-ring-n8-T0.7-glauber-tpl-rheon-a2-pop-none-t0', 'rheon-a2', 'none'],
      ['fq117-ring-n8-T0.7-glauber-tpl-rheon-a2-pop-probe-t0', 'rheon-a2', 'probe'],
    ]);
    // Each arm's prompts are its own template's (the surrogate counts the rendered prompt), and only the
    // probe arm's agents carry a persona.
    const t0 = await queryRows(
      `SELECT config_id, min(prompt_tokens)::INTEGER AS tokens, count(persona)::INTEGER AS personas
       FROM read_parquet('${out}/events/*.parquet') WHERE sweep = 0 GROUP BY config_id ORDER BY config_id`,
    );
    const byArm = new Map(t0.map((r) => [String(r.config_id).replace('fq117-ring-n8-T0.7-glauber-', ''), r]));
    expect(byArm.get('tpl-panta-v1-pop-none')!.tokens).not.toBe(byArm.get('tpl-rheon-a2-pop-none')!.tokens);
    expect(byArm.get('tpl-rheon-a2-pop-none')!.personas).toBe(0);
    expect(byArm.get('tpl-rheon-a2-pop-probe')!.personas).toBe(8);
    expect((await verifyCorpus(out)).problems).toEqual([]);
  });
});
