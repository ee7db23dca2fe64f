import { describe, expect, it } from 'vitest';
import { functionLengths, longFunctions, MAX_LINES } from '../scripts/long-functions.mjs';

/**
 * Functions over MAX_LINES lines that are still waiting to be split into named steps, as `file#name`, each
 * with why it is kept for now. A function leaves this list when it is split; an entry whose function is no
 * longer long fails the test too, so the list only shrinks.
 */
const ALLOWED: Record<string, string> = {};

describe('function length (a parse of the sources, no build)', () => {
  it('measures each function from its first token to its closing line, nested ones on their own', () => {
    const text = [
      '/** doc */',
      'export function outer(a: number) {',
      '  const inner = (b: number) => {',
      '    return b + 1;',
      '  };',
      '  return inner(a);',
      '}',
      'class K {',
      '  method() {',
      '    return 1;',
      '  }',
      '}',
    ].join('\n');
    expect(functionLengths(text)).toEqual([
      { name: 'outer', line: 2, lines: 6 },
      { name: 'inner', line: 3, lines: 3 },
      { name: 'K.method', line: 9, lines: 3 },
    ]);
  });

  it(`no function in packages/*/src is over ${MAX_LINES} lines outside the allow-list, and the list has no stale entry`, () => {
    const long = longFunctions().map((f) => `${f.file}#${f.name}`);
    const unlisted = long.filter((key) => !(key in ALLOWED));
    const stale = Object.keys(ALLOWED).filter((key) => !long.includes(key));
    expect({ unlisted, stale }).toEqual({ unlisted: [], stale: [] });
  });
});
