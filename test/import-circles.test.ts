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
  });

  it.each(['core', 'engine'])('packages/%s/src has none', (pkg) => {
    expect(circles(new URL(`../packages/${pkg}/src`, import.meta.url).pathname)).toEqual([]);
  });
});
