import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PANTA_V1_TEMPLATE, RHEON_TEMPLATE } from '@panta/core';
import { RHEON6, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { corpusIdentity, loadSweep } from '../src/index.js';

const SPEC = (template?: string) => `name: template-ref
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [8]
temperatures: [0.7]
trials: 1
sweeps: 2
seed: 3
${template === undefined ? '' : `template: ${template}\n`}`;

describe("a spec's template: a built-in name or a file", () => {
  it('no template is rheon-a2 (the same sweep); panta-v1 is the former default, another sweep', () => {
    const dir = tempDir();
    const none = loadSweep(writeSpec(dir, SPEC(), 'none.yaml'));
    const a2 = loadSweep(writeSpec(dir, SPEC('rheon-a2'), 'a2.yaml'));
    const v1 = loadSweep(writeSpec(dir, SPEC('panta-v1'), 'v1.yaml'));
    expect(none.template).toBe(RHEON_TEMPLATE);
    expect(a2.template).toBe(RHEON_TEMPLATE);
    expect(v1.template).toBe(PANTA_V1_TEMPLATE);
    expect(a2.fingerprint).toBe(none.fingerprint);
    expect(v1.fingerprint).not.toBe(none.fingerprint);
    // A built-in's name is not part of what determines the corpus (its text is): panta-v1 resumes a corpus
    // made when it was the default, whose spec named no template.
    expect(corpusIdentity(v1.spec)).toEqual(corpusIdentity(none.spec));
    // The spec's departures from the paper describe the sweep for its dataset card: the same corpus.
    const described = loadSweep(writeSpec(dir, `${SPEC()}departures: [two sweeps instead of ten]\n`, 'described.yaml'));
    expect(described.spec.departures).toEqual(['two sweeps instead of ten']);
    expect(described.fingerprint).toBe(none.fingerprint);
  });

  it('regression: panta-v1 on lattices keeps the fingerprint Panta gave before the A.2 default; a mean field, now shuffled, does not', () => {
    // The dataset beside the spec (a relative path, so the fingerprint does not depend on where the test runs).
    const dir = tempDir();
    copyFileSync(RHEON6, join(dir, 'rheon6.jsonl'));
    const fingerprint = (geometries: string, file: string) =>
      loadSweep(
        writeSpec(
          dir,
          `name: fp\ndataset: rheon6.jsonl\nprompts: [fq117]\ngeometries: [${geometries}]\nsizes: [16]\ntemperatures: [0.7]\ntrials: 1\nsweeps: 2\nseed: 3\ntemplate: panta-v1\n`,
          file,
        ),
      ).fingerprint;
    // These specs' fingerprints without `template`, computed by Panta at d59dd08 (before the A.2 default).
    expect(fingerprint('ring, torus2d', 'ring.yaml')).toBe('516b660e952bfe6b5c2a77bf25eb5b5de3833317fc0b4ad78962a6a787509c56');
    // A mean field written in agent order must not be resumed in shuffled order.
    expect(fingerprint('meanfield', 'mf.yaml')).not.toBe('e3c50e1f8056477c7b12d9e120f95f336851b4136a79bb1b3c2776f9ffa37e4b');
  });

  it('a file is read relative to the spec, as before', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'mine.yaml'), stringify({ ...RHEON_TEMPLATE, system: 'You answer questions.' }));
    const sweep = loadSweep(writeSpec(dir, SPEC('mine.yaml')));
    expect(sweep.template.system).toBe('You answer questions.');
    expect(sweep.template.update).toBe(RHEON_TEMPLATE.update);
  });

  it('a name that is neither built in nor a file fails in one line naming the field and the names (exit 2)', () => {
    const dir = tempDir();
    const r = panta(['run', writeSpec(dir, SPEC('rheon')), '--out', join(dir, 'out')]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/spec\.yaml: template: "rheon" is neither a built-in template nor a file; fix: use one of rheon-a2, panta-v1/);
  });
});
