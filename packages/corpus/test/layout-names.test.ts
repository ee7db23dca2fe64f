import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CORPUS_FILES,
  controlJournalPath,
  defaultReportDir,
  judgeCachePath,
  liveStatusPath,
  logPath,
  manifestPath,
  orderParamsPath,
  outLockPath,
  partPath,
  runJournalPath,
  runsTablePath,
  shardName,
  shardPath,
  whiteningPath,
} from '../src/index.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** The one module allowed to spell the layout's names. */
const LAYOUT = join('packages', 'corpus', 'src', 'corpus-paths.ts');

const FILE_NAMES = [
  'manifest.json',
  'runs.parquet',
  'order_params.parquet',
  'log.jsonl',
  'status.json',
  'runs.jsonl',
  'judge-cache.jsonl',
  '.state',
  '.parts',
];
const FOLDER_NAMES = ['events', 'whitening', 'control', 'lock', 'report'];
const quoted = (names: readonly string[]) => names.map((n) => n.replace(/[.\\-]/g, '\\$&')).join('|');
/**
 * Ways code spells a corpus path: a string that is a file name of the layout; a path joined from one of its
 * folder names; a template that appends one to a folder. Prose in messages ("runs.parquet is missing") is not
 * a path and may name them.
 */
const PATTERNS = [
  new RegExp(`(['"\`])(${quoted(FILE_NAMES)})\\1`),
  new RegExp(`\\b(join|resolve)\\([^;]*?(['"\`])(${quoted(FOLDER_NAMES)})\\2`),
  new RegExp(`\\$\\{[^}]*\\}[/\\\\](${quoted([...FILE_NAMES, 'events', 'whitening'])})\\b`),
];

/** Lines of `text` that spell a layout name in code (comments skipped), as `line: text`. */
function spellings(text: string): string[] {
  const found: string[] = [];
  let inBlock = false;
  text.split('\n').forEach((raw, i) => {
    let line = raw;
    if (inBlock) {
      const end = line.indexOf('*/');
      if (end < 0) return;
      line = line.slice(end + 2);
      inBlock = false;
    }
    const open = line.indexOf('/*');
    if (open >= 0 && line.indexOf('*/', open) < 0) {
      inBlock = true;
      line = line.slice(0, open);
    }
    line = line.replace(/\/\*.*?\*\//g, '').replace(/(^|\s)\/\/.*$/, '');
    if (PATTERNS.some((p) => p.test(line))) found.push(`${i + 1}: ${raw.trim()}`);
  });
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the corpus layout has one home', () => {
  it('no source file outside corpus-paths.ts spells a file or folder name of a corpus', () => {
    const offenders: string[] = [];
    for (const pkg of readdirSync(join(ROOT, 'packages'))) {
      for (const file of sources(join(ROOT, 'packages', pkg, 'src'))) {
        const rel = relative(ROOT, file);
        if (rel === LAYOUT) continue;
        for (const s of spellings(readFileSync(file, 'utf8'))) offenders.push(`${rel}:${s}`);
      }
    }
    expect(offenders, 'use the path functions of packages/corpus/src/corpus-paths.ts instead').toEqual([]);
  });

  it('the check finds the spellings it looks for, in code and not in comments or prose', () => {
    expect(spellings("const f = join(out, 'runs.parquet');")).toHaveLength(1);
    expect(spellings("mkdirSync(join(tmp, 'events'), { recursive: true });")).toHaveLength(1);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the sample is source text holding a template
    expect(spellings('const log = `${out}/log.jsonl`;')).toHaveLength(1);
    expect(spellings("return join(out, '.state', 'lock');")).toHaveLength(1);
    expect(spellings("// reads join(out, 'runs.parquet')\n/**\n * join(out, 'events')\n */")).toEqual([]);
    expect(spellings("problems.push('order_params.parquet is missing');")).toEqual([]);
    expect(spellings("queue.add('events', data);")).toEqual([]);
  });

  it('every name is where docs/DESIGN.md#layout puts it', () => {
    const out = join('/', 'corpus');
    expect(manifestPath(out)).toBe(join(out, 'manifest.json'));
    expect(runsTablePath(out)).toBe(join(out, 'runs.parquet'));
    expect(orderParamsPath(out)).toBe(join(out, 'order_params.parquet'));
    expect(whiteningPath(out, 'q1', 'hash')).toBe(join(out, 'whitening', 'q1__hash.parquet'));
    expect(shardPath(out, 'r1')).toBe(join(out, 'events', 'r1.parquet'));
    expect(shardName('r1')).toBe(join('events', 'r1.parquet'));
    expect(partPath(out, 'r1', 42)).toBe(join(out, 'events', '.parts', 'r1', 'part-000000000042.parquet'));
    expect(logPath(out)).toBe(join(out, 'log.jsonl'));
    expect(outLockPath(out)).toBe(join(out, '.state', 'lock'));
    expect(liveStatusPath(out)).toBe(join(out, '.state', 'status.json'));
    expect(runJournalPath(out)).toBe(join(out, '.state', 'runs.jsonl'));
    expect(controlJournalPath(out, 'r1')).toBe(join(out, '.state', 'control', 'r1.jsonl'));
    expect(judgeCachePath(out)).toBe(join(out, '.state', 'judge-cache.jsonl'));
    expect(defaultReportDir(out)).toBe(join(out, 'report'));
    expect(Object.values(CORPUS_FILES)).toEqual(expect.arrayContaining([...FILE_NAMES, ...FOLDER_NAMES]));
  });

  it('a run id that is no file name is refused before a journal path is made of it', () => {
    expect(() => controlJournalPath('/corpus', '../x')).toThrow(/cannot be a file name/);
  });
});
