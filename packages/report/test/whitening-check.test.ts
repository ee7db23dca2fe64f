import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runSweep } from '@panta/engine';
import { whiteningDifferences, whiteningWarning } from '@panta/report';
import { RHEON6, panta, tempDir, writeSpec } from '../../../test/helpers.js';

const BASE = `dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring]
sizes: [8]
temperatures: [0.7]
trials: 1
sweeps: 2
seed: 4
`;

describe('panta report --compare: one visible line when corpora were whitened differently', () => {
  const dir = tempDir('panta-compare-');
  const [async, shared, own, other] = ['async', 'shared', 'own', 'other'].map((n) => join(dir, n));
  beforeAll(async () => {
    await runSweep(writeSpec(dir, `name: async\n${BASE}`, 'async.yaml'), { out: async });
    // The synchronous arm, once in async's whitening and once in its own.
    await runSweep(writeSpec(dir, `name: shared\n${BASE}dynamics: synchronous\nwhitening: {from: async}\n`, 'shared.yaml'), {
      out: shared,
    });
    await runSweep(writeSpec(dir, `name: own\n${BASE}dynamics: synchronous\n`, 'own.yaml'), { out: own });
    // Another prompt only: nothing shared, nothing to compare.
    await runSweep(writeSpec(dir, `name: other\n${BASE.replace('[fq117, fq367]', '[fq75]')}`, 'other.yaml'), { out: other });
  });

  it('names every shared (prompt, encoder) whose whitening differs, and none for a shared whitening or no shared prompt', () => {
    expect(whiteningDifferences([async, shared])).toEqual([]);
    expect(whiteningWarning([async, shared])).toBeNull();
    expect(whiteningDifferences([async, own]).map((d) => d.key)).toEqual(['fq117__hashing', 'fq367__hashing']);
    expect(whiteningDifferences([async, shared, own]).map((d) => [d.key, d.b])).toEqual([
      ['fq117__hashing', own],
      ['fq367__hashing', own],
    ]);
    expect(whiteningDifferences([async, other])).toEqual([]);
  });

  it('the terminal and the HTML show the warning in one line; a shared whitening shows none', () => {
    const r = panta(['report', own, '--compare', async, shared], dir);
    expect(r.code).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('panta: warning:'));
    expect(warnings).toEqual([
      'panta: warning: own and async, shared were whitened differently (fq117/hashing, fq367/hashing): their magnetisation and cohesion are not comparable; run the others with whitening: {from: own}, or grid the arms in one sweep',
    ]);
    const html = readFileSync(join(own, 'report', 'index.html'), 'utf8');
    expect(html).toContain('Warning: own and async, shared were whitened differently (fq117/hashing, fq367/hashing)');
    const ok = panta(['report', shared, '--compare', async], dir);
    expect(ok.code).toBe(0);
    expect(ok.stderr).not.toMatch(/warning/);
    expect(readFileSync(join(shared, 'report', 'index.html'), 'utf8')).not.toContain('Warning:');
  });

  it('a --compare folder that is not a corpus is one line, exit 2, and no report', () => {
    const r = panta(['report', async, '--compare', join(dir, 'nothing')], dir);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/nothing: --compare: is not a corpus folder \(no manifest\.json\); fix: /);
    expect(existsSync(join(async, 'report'))).toBe(false);
  });
});
