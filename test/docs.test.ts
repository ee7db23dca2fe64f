import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/**
 * The contributor docs name files by path, and a newcomer follows them to the file to change: a path that
 * a rename or a split left behind sends them nowhere. Paths are written from the repository root or, in the
 * architecture's tables, from `packages/`.
 */
const DOCS = ['docs/ARCHITECTURE.md', 'docs/DESIGN.md', 'CONTRIBUTING.md'];

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

/** The repository's text files (tracked, or new and not ignored), as paths from the root. */
function repositoryFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' });
  return out
    .split('\0')
    .filter((f) => /\.(ts|mts|mjs|js|md|yaml|yml|sh|sbatch|json)$|(^|\/)(Dockerfile|run)$/.test(f))
    .filter((f) => f !== 'package-lock.json' && existsSync(join(ROOT, f)) && statSync(join(ROOT, f)).isFile());
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown file's headings make (outside code blocks), repeats numbered as GitHub numbers them. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, title] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = headingSlug(title!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (!anchors) anchorCache.set(path, (anchors = headingAnchors(readFileSync(path, 'utf8'))));
  return anchors;
}

/**
 * What is wrong with the references in one file's text (`file`: its path from the root), one line each:
 * - the design document named bare or under a path that does not exist (it is `docs/DESIGN.md`, or
 *   `DESIGN.md` in a link from `docs/`), or with an anchor its headings do not make;
 * - any `<file>.md#anchor` (a link, or a path from the root) whose file or heading does not exist;
 * - a path outside the repository: a `../` that climbs above the root, or a folder of the machine the
 *   repository was written on;
 * - an issue tracker's number, which a clone does not hold.
 */
function referenceProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  const here = dirname(join(ROOT, file));
  const isMarkdown = file.endsWith('.md');
  /** A Markdown link's target resolves from the file's folder; any other mention from the root. */
  const target = (path: string, start: number) =>
    isMarkdown && text.slice(Math.max(0, start - 2), start) === '](' ? resolve(here, path) : resolve(ROOT, path);
  for (const m of text.matchAll(/([\w./-]*)DESIGN\.md(#[\w-]*)?(\]?)/g)) {
    if (m[3]) continue; // a link's text: its target is checked
    const path = target(`${m[1]}DESIGN.md`, m.index!);
    if (!existsSync(path)) problems.push(`${file}: "${m[0]}" names no file: write docs/DESIGN.md#<section>`);
    else if (m[2] && !anchorsOf(path).has(m[2].slice(1))) problems.push(`${file}: "${m[0]}": docs/DESIGN.md has no heading ${m[2]}`);
  }
  for (const m of text.matchAll(/(?<![\w/:.-])([\w.-][\w./-]*\.md)#([\w-]+)/g)) {
    if (m[1]!.endsWith('DESIGN.md')) continue;
    const path = target(m[1]!, m.index!);
    if (!existsSync(path)) problems.push(`${file}: "${m[0]}" names no file`);
    else if (!anchorsOf(path).has(m[2]!)) problems.push(`${file}: "${m[0]}": ${m[1]} has no heading #${m[2]}`);
  }
  if (isMarkdown)
    for (const m of text.matchAll(/\]\(#([\w-]+)\)/g))
      if (!headingAnchors(text).has(m[1]!)) problems.push(`${file}: link to #${m[1]}: no such heading in this file`);
  // Markdown quotes other files' text in its prose (a spec's `$schema=../schema/...`): there, links are checked
  for (const m of text.matchAll(/(?<![\w.])(?:\.\.\/)+[\w.-]*/g)) {
    if (isMarkdown && text.slice(Math.max(0, m.index! - 2), m.index!) !== '](' && !/\/shared$/.test(m[0])) continue;
    const path = resolve(here, m[0]);
    const rel = relative(ROOT, path);
    if (rel === '..' || rel.startsWith(`..${sep}`) || (/\/shared$/.test(m[0]) && !existsSync(path)))
      problems.push(`${file}: "${m[0]}" is outside the repository`);
  }
  // The tracker's numbers mean nothing to a reader of the clone (the changelog's history keeps its own)
  if (file !== 'CHANGELOG.md')
    for (const m of text.matchAll(/\bissues? #?\d+/gi)) problems.push(`${file}: "${m[0]}": say what it is instead of its number`);
  const machine = ['', 'work', ''].join('/');
  if (text.includes(machine)) problems.push(`${file}: names ${machine}..., a folder outside the repository`);
  return problems;
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

  it('every reference to the design and to a heading resolves, and none leaves the repository or names an issue', () => {
    const files = repositoryFiles();
    expect(files).toContain('docs/DESIGN.md');
    const problems = files
      .filter((f) => f !== 'test/docs.test.ts')
      .flatMap((f) => referenceProblems(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(problems).toEqual([]);
  });

  it('the reference check refuses a bare DESIGN.md, a missing heading, a path outside the repository and an issue number', () => {
    const bare = 'DESIGN' + '.md';
    expect(referenceProblems('packages/core/src/x.ts', `// see ${bare} section 5`)).toHaveLength(1);
    expect(referenceProblems('packages/core/src/x.ts', `// see docs/${bare}#event-rows`)).toEqual([]);
    expect(referenceProblems('packages/core/src/x.ts', `// see docs/${bare}#no-such-section`)).toHaveLength(1);
    expect(referenceProblems('docs/teams.md', `as [the design](${bare}#whitening) says`)).toEqual([]);
    expect(referenceProblems('README.md', `as [the design](${bare}#whitening) says`)).toHaveLength(1);
    expect(referenceProblems('README.md', 'see [the packages](docs/ARCHITECTURE.md#packages)')).toEqual([]);
    expect(referenceProblems('README.md', 'see [x](docs/ARCHITECTURE.md#nowhere) and [y](#nowhere)')).toHaveLength(2);
    // Spelled in parts, so that this file names no path outside the repository itself.
    const sibling = ['..', 'shared'].join('/');
    expect(referenceProblems('README.md', `the brief in ${sibling}/brief.md`)).toHaveLength(1);
    expect(referenceProblems('packages/llm/src/x.ts', '// A Potts-like agent (issue 2)')).toHaveLength(1);
    expect(referenceProblems('docs/teams.md', 'the [brief](../../brief.md)')).toHaveLength(1);
    expect(referenceProblems('scripts/x.mjs', "readFileSync('../../brief.md')")).toHaveLength(1);
    expect(referenceProblems('deploy/k8s/array/kustomization.yaml', `  - ${sibling}`)).toEqual([]);
    expect(referenceProblems('docs/travel.md', `read ${['', 'work', 'shared', 'x.md'].join('/')}`)).toHaveLength(1);
    expect(headingAnchors('# A\n## Run on a cluster\n```\n# not a heading\n```\n## Run on a cluster\n### `panta plan` (GPU)')).toEqual(
      new Set(['a', 'run-on-a-cluster', 'run-on-a-cluster-1', 'panta-plan-gpu']),
    );
  });

  it('CONTRIBUTING lists every bench', () => {
    const text = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
    const benches = readdirSync(join(ROOT, 'bench')).filter((f) => f.endsWith('.mjs'));
    expect(benches.length).toBeGreaterThan(0);
    expect(benches.filter((f) => !text.includes(`bench/${f}`))).toEqual([]);
  });

  it('LICENSE is the Apache License 2.0 that package.json names', () => {
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).license).toBe('Apache-2.0');
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
  });
});
