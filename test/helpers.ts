import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
export const RHEON6 = join(ROOT, 'datasets', 'rheon6.jsonl');

/** A fresh temporary folder for one test. */
export function tempDir(prefix = 'panta-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes a sweep spec (YAML text) into `dir` and returns its path. */
export function writeSpec(dir: string, yaml: string, name = 'spec.yaml'): string {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return file;
}
