import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSweep } from '@panta/engine';
import { ROOT, tempDir, writeSpec } from '../../../test/helpers.js';
import { loadCorpus } from '../src/load-corpus.js';
import { drawCatalog } from '../src/catalog.js';

describe('the population tables of a sweep of team runs only', () => {
  it('say there is no population run (not "No run is complete yet."), and a team relay on a chain gets no population chain table', async () => {
    const dir = tempDir();
    const spec = readFileSync(join(ROOT, 'examples', 'lost-in-propagation.yaml'), 'utf8')
      .replaceAll('../datasets/', `${ROOT}/datasets/`)
      .replace(/^out: .*$/m, '')
      .replace('sizes: [1, 2, 3, 4, 5, 6, 7, 8]', 'sizes: [2, 3]\nprompts: [mf01]')
      .replace('trials: 3', 'trials: 1');
    const out = join(dir, 'out');
    expect((await runSweep(writeSpec(dir, spec), { out, logLevel: 'silent' })).status).toBe('complete');
    const { tables } = await drawCatalog(await loadCorpus(out), out);
    expect(tables.map((t) => t.id)).not.toContain('lost-in-propagation-accuracy');
    const empty = tables.filter((t) => t.rows.length === 0);
    expect(empty.length).toBeGreaterThan(0);
    for (const t of empty) expect(t.empty, t.id).toMatch(/^No population run: every run of this sweep is a team run/);
  });
});
