import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The library's packages; the studies (packages/studies) are where a paper's experiment lives. */
const LIBRARY = ['core', 'llm', 'embed', 'judge', 'corpus', 'engine', 'cluster', 'report', 'cli'];

/** Names of the travel study that must not appear in the library's sources. */
const STUDY_WORDS = /travel|barcelona/i;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath ?? (e as { path?: string }).path ?? dir, e.name));
}

function mentions(pkg: string): string[] {
  const root = new URL(`../packages/${pkg}/src`, import.meta.url).pathname;
  const out: string[] = [];
  for (const file of sources(root)) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (STUDY_WORDS.test(line)) out.push(`${file.slice(root.length + 1)}:${i + 1}`);
      });
  }
  return out;
}

describe('the library names no study', () => {
  it.each(LIBRARY)('packages/%s/src says nothing of the travel study', (pkg) => {
    expect(mentions(pkg)).toEqual([]);
  });

  it('the check sees a mention where there is one (the studies package has them)', () => {
    const root = new URL('../packages/studies/src', import.meta.url).pathname;
    expect(sources(root).some((f) => STUDY_WORDS.test(readFileSync(f, 'utf8')))).toBe(true);
  });
});
