import { expect } from 'vitest';
import { catalog } from '../src/catalog.js';
import { idMatches } from '../src/section.js';

/** Asserts that each id a report wrote (figures and tables) is named by exactly one entry of the catalog. */
export function expectCatalogued(written: { figures: readonly string[]; tables: readonly string[] }, encoders: readonly string[]): void {
  const entries = catalog().flatMap((s) => [
    ...s.figureIds.map((id) => ({ kind: 'figure', id })),
    ...s.tableIds.map((id) => ({ kind: 'table', id })),
  ]);
  const check = (kind: string, id: string) =>
    expect(
      entries.filter((e) => e.kind === kind && idMatches(id, [e.id], encoders)).map((e) => e.id),
      `${kind} ${id}`,
    ).toHaveLength(1);
  for (const id of written.figures) check('figure', id);
  for (const id of written.tables) check('table', id);
}
