import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSweep } from '@panta/engine';
import { ROOT, tempDir, writeSpec } from '../../../test/helpers.js';
import { loadCorpus } from '../src/load-corpus.js';
import { catalog, drawCatalog } from '../src/catalog.js';

describe('the report of a sweep of team runs only', () => {
  it('shows the team sections only: no population table (7, 9, 10, arm tests) with empty rows, no population chain table', async () => {
    const dir = tempDir();
    const spec = readFileSync(join(ROOT, 'examples', 'lost-in-propagation.yaml'), 'utf8')
      .replaceAll('../datasets/', `${ROOT}/datasets/`)
      .replace(/^out: .*$/m, '')
      .replace('sizes: [1, 2, 3, 4, 5, 6, 7, 8]', 'sizes: [2, 3]\nprompts: [mf01]')
      .replace('trials: 3', 'trials: 1');
    const out = join(dir, 'out');
    expect((await runSweep(writeSpec(dir, spec), { out, logLevel: 'silent' })).status).toBe('complete');
    const { figures, tables } = await drawCatalog(await loadCorpus(out), out);
    const population = catalog().find((s) => s.name === 'population')!;
    for (const id of [...tables.map((t) => t.id), ...figures.map((f) => f.id)])
      expect([...population.tableIds, ...population.figureIds], id).not.toContain(id);
    expect(tables.map((t) => t.id)).toEqual(expect.arrayContaining(['team-answers', 'team-cost']));
  });
});
