import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../src/', import.meta.url).pathname;

/** The files of report/src each file imports or re-exports from, type-only imports included. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC).filter((f) => f.endsWith('.ts'));
  return new Map(
    files.map((f) => [
      f,
      [...readFileSync(`${SRC}${f}`, 'utf8').matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'\.\/([^']+)\.js'/gm)].map((m) => `${m[1]}.ts`),
    ]),
  );
}

/** The first circle found (a path that returns to its start), or null. */
function circle(graph: Map<string, string[]>): string[] | null {
  const done = new Set<string>();
  const visit = (f: string, path: string[]): string[] | null => {
    if (path.includes(f)) return [...path.slice(path.indexOf(f)), f];
    if (done.has(f)) return null;
    for (const next of graph.get(f) ?? []) {
      const found = visit(next, [...path, f]);
      if (found) return found;
    }
    done.add(f);
    return null;
  };
  for (const f of graph.keys()) {
    const found = visit(f, []);
    if (found) return found;
  }
  return null;
}

describe('report/src imports (a static scan of the sources)', () => {
  const graph = importGraph();

  it('reads imports and re-exports, type-only ones too', () => {
    expect(graph.get('write-report.ts')).toEqual(expect.arrayContaining(['catalog.ts', 'corpus-data.ts', 'table.ts']));
    expect(graph.get('index.ts')).toContain('figure.ts');
    expect(
      circle(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', ['a.ts']],
        ]),
      ),
    ).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts']);
  });

  it('has no import circle', () => {
    expect(circle(graph)).toBeNull();
  });

  it('keeps the shared types in leaves that import nothing of the report', () => {
    for (const leaf of ['corpus-data.ts', 'figure.ts', 'table.ts']) expect(graph.get(leaf), leaf).toEqual([]);
  });
});
