import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/**
 * The contributor docs name files by path, and a newcomer follows them to the file to change: a path that
 * a rename or a split left behind sends them nowhere. Paths are written from the repository root or, in the
 * architecture's tables, from `packages/`.
 */
const DOCS = ['docs/ARCHITECTURE.md', 'CONTRIBUTING.md'];

/** Where a checked path may start: an entry of the repository root, or a package's folder. */
const ROOTS = new Set([...readdirSync(ROOT), ...readdirSync(join(ROOT, 'packages'))]);

/** Backticked paths of files and folders (`a/b.ts`, `a/b/`) outside code blocks; wildcards and `<placeholders>` are not paths. */
function namedPaths(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '');
  const paths = new Set<string>();
  for (const [, inner] of prose.matchAll(/`([^`\n]+)`/g)) {
    for (const token of inner!.split(/[\s,()]+/)) {
      if (!/^[\w.-]+\/[\w./-]*$/.test(token)) continue;
      if (!/\.(ts|mjs|md|yaml|json)$/.test(token) && !token.endsWith('/')) continue;
      // a path relative to a package's src (`openai/`) or a corpus folder (`events/`) is not checked
      if (!ROOTS.has(token.split('/')[0]) || /^(events|runs)\/|^report\/$/.test(token)) continue;
      paths.add(token);
    }
  }
  return [...paths];
}

/** Relative Markdown links: `[text](path)` or `[text](path#anchor)`. */
function linkedPaths(text: string): string[] {
  return [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]).filter((p) => !/^[a-z]+:/.test(p));
}

describe('contributor docs', () => {
  for (const doc of DOCS) {
    it(`every file and folder ${doc} names exists`, () => {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      const named = namedPaths(text);
      expect(named.length).toBeGreaterThan(0);
      const missing = named.filter((p) => !existsSync(join(ROOT, p)) && !existsSync(join(ROOT, 'packages', p)));
      expect(missing, `${doc} names paths that do not exist: update it with the rename`).toEqual([]);
      const dir = join(ROOT, doc, '..');
      expect(linkedPaths(text).filter((p) => !existsSync(join(dir, p)))).toEqual([]);
    });
  }

  it('LICENSE is the Apache License 2.0 that package.json names', () => {
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).license).toBe('Apache-2.0');
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
  });
});
