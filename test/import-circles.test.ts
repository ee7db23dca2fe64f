import { describe, expect, it } from 'vitest';
import { circles, valueImports } from '../scripts/import-circles.mjs';

describe('import circles (a static scan of the sources)', () => {
  it('reads value imports and skips type-only ones', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      "import { type C, type D } from './c.js';",
      "import { type E, f } from './e.js';",
      "export { g } from './g.js';",
      "export type { H } from './h.js';",
      "import { z } from 'zod';",
    ].join('\n');
    expect(valueImports(text)).toEqual(['./a.js', './e.js', './g.js']);
    expect(valueImports(text, true)).toEqual(['./a.js', './b.js', './c.js', './e.js', './g.js', './h.js']);
  });

  it.each(['cli', 'cluster', 'core', 'corpus', 'embed', 'engine', 'judge', 'llm', 'report', 'studies'])(
    'packages/%s/src has none',
    (pkg) => {
      expect(circles(new URL(`../packages/${pkg}/src`, import.meta.url).pathname)).toEqual([]);
    },
  );

  it("counting type-only imports too, core's only circle is the spec schema's (docs/ARCHITECTURE.md)", () => {
    expect(circles(new URL('../packages/core/src', import.meta.url).pathname, true)).toEqual([
      ['spec/arms.ts', 'spec/bounds.ts', 'spec/memory.ts', 'spec/schema.ts'],
    ]);
    for (const pkg of ['cli', 'cluster', 'corpus', 'embed', 'engine', 'judge', 'llm', 'report', 'studies'])
      expect(circles(new URL(`../packages/${pkg}/src`, import.meta.url).pathname, true), pkg).toEqual([]);
  });

  it('the surrogate and its scenario models (packages/llm/src) have none, counting type-only imports too', () => {
    expect(circles(new URL('../packages/llm/src', import.meta.url).pathname, true)).toEqual([]);
  });
});
