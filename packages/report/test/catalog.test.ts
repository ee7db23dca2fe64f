import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { catalog, drawCatalog } from '../src/catalog.js';
import type { CorpusData } from '../src/corpus-data.js';
import { section } from '../src/section.js';

const SRC = new URL('../src/', import.meta.url).pathname;

describe('the report catalog', () => {
  it('names each figure and table once, figures and tables together (they share the anchors of index.html)', () => {
    const ids = catalog().flatMap((s) => [...s.figureIds, ...s.tableIds]);
    expect(ids.length).toBeGreaterThan(30);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(catalog().map((s) => s.name)).toEqual(['population', 'phase', 'teams', 'travel']);
  });

  it('is the only list: no other file of report/src returns a list of figures or tables', () => {
    const lists = readdirSync(SRC)
      .filter((f) => f.endsWith('.ts') && f !== 'catalog.ts' && f !== 'section.ts')
      .filter((f) => /\)\s*:\s*(Promise<)?(Figure|Table)\[\]/.test(readFileSync(`${SRC}${f}`, 'utf8')));
    expect(lists).toEqual([]);
  });

  it('refuses an entry that writes an id it does not name (a programming error, not bad input)', async () => {
    const table = { id: 'unnamed', title: '', caption: '', columns: [], rows: [] };
    const rogue = section({ name: 'rogue', load: async () => 1, figures: [], tables: [{ ids: ['named'], make: () => table }] });
    const data = { encoders: ['e1'] } as unknown as CorpusData;
    await expect(drawCatalog(data, '', [rogue])).rejects.toThrow('report catalog: entry named made unnamed');
  });

  it('draws one figure per encoder for an `{encoder}` entry, and gives every empty table of a section its reason', async () => {
    const table = (id: string, rows: number) => ({
      id,
      title: '',
      caption: '',
      columns: ['c'],
      rows: Array.from({ length: rows }, () => [1]),
    });
    const figure = (id: string) => ({ id, title: '', caption: '', spec: {} });
    const s = section({
      name: 's',
      load: async (data: CorpusData) => data.encoders,
      figures: [{ ids: ['f-{encoder}'], make: (encoders) => encoders.map((e) => figure(`f-${e}`)) }],
      tables: [
        { ids: ['full'], make: () => table('full', 2) },
        { ids: ['empty'], make: () => table('empty', 0) },
        { ids: ['absent'], make: () => null },
      ],
      emptyReason: () => 'why',
    });
    const drawn = await drawCatalog({ encoders: ['e1', 'e2'] } as unknown as CorpusData, '', [s]);
    expect(drawn.figures.map((f) => f.id)).toEqual(['f-e1', 'f-e2']);
    expect(drawn.tables.map((t) => [t.id, t.empty])).toEqual([
      ['full', undefined],
      ['empty', 'why'],
    ]);
  });
});
