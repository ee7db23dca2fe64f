import { accessSync, constants, existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { InputError } from '@panta/core';
import { CORPUS_FILES, manifestPath, outLockPath } from '@panta/corpus';

const FIX = 'choose an --out in a folder you can write to';

/** Why a file-system call failed, in words, from its errno. */
function cause(e: unknown, path: string): string {
  const code = (e as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied at ${path}`;
    case 'EROFS':
      return `${path} is on a read-only file system`;
    case 'ENOSPC':
      return 'no space left on the device';
    case 'ENOTDIR':
      return `a part of ${path} is a file, not a folder`;
    case 'ENOENT':
      // mkdir of a folder whose parent exists: a file system that makes no folders (/proc, /sys).
      return `the file system at ${dirname(path)} does not allow new folders`;
    default:
      return `${code ?? (e as Error).message} at ${path}`;
  }
}

/** The nearest path at or above `path` that exists (a file, when the path runs through one). */
function existingAncestor(path: string): string {
  let at = path;
  for (;;) {
    try {
      statSync(at);
      return at;
    } catch (e) {
      const parent = dirname(at);
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === at) return at;
      at = parent;
    }
  }
}

/**
 * Checks, writing nothing, that `out` can hold a corpus: it is a folder or can be made one (the nearest
 * existing folder above it is a folder, writable as far as permissions tell). A file in the way, or a
 * folder without write permission, is bad input naming the real cause.
 */
export function checkOutFolder(out: string): void {
  const at = existingAncestor(out);
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(at);
  } catch (e) {
    throw new InputError(out, '', `cannot be made (${cause(e, at)})`, FIX);
  }
  if (!stat.isDirectory()) {
    const what = at === out ? 'is a file, not a folder' : `cannot be made: ${at} is a file, not a folder`;
    throw new InputError(out, '', what, 'choose another --out, or move that file away');
  }
  try {
    accessSync(at, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw new InputError(out, '', `cannot be written (${cause(e, at)})`, FIX);
  }
}

/**
 * Makes `out` and the folder of its lock, one level at a time: the first write of a sweep. If the file
 * system refuses (read-only, /proc, a full disk), the levels made here are removed again, so a refused
 * folder leaves nothing behind, and the error names the cause. (A recursive mkdir also never returns on
 * file systems that answer ENOENT for a folder whose parent exists, such as /proc.)
 */
export function makeOutFolder(out: string): void {
  const missing: string[] = [];
  const top = existingAncestor(out);
  for (let at = out; at !== top; at = dirname(at)) missing.unshift(at);
  const lockDir = dirname(outLockPath(out));
  if (existingAncestor(lockDir) !== lockDir) missing.push(lockDir);
  const made: string[] = [];
  try {
    for (const dir of missing) {
      try {
        mkdirSync(dir);
      } catch (e) {
        // Made meanwhile by another process starting on the same folder (collector shards start together).
        if ((e as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory()) continue;
        throw e;
      }
      made.push(dir);
    }
  } catch (e) {
    const failed = missing[made.length];
    for (const dir of made.reverse()) {
      try {
        rmdirSync(dir);
      } catch {
        // Someone else wrote into it meanwhile: theirs to keep.
      }
    }
    throw new InputError(out, '', `cannot be ${failed.length > out.length ? 'written' : 'made'} (${cause(e, failed)})`, FIX);
  }
}

/** What a sweep leaves in its folder before its manifest exists (the lock, the log): a start that was stopped at once. */
const BEFORE_MANIFEST: ReadonlySet<string> = new Set([CORPUS_FILES.state, CORPUS_FILES.log]);

/**
 * Refuses an existing, non-empty `out` that holds no Panta corpus (no manifest.json, and files other than what
 * a sweep writes before its manifest): writing a corpus among a user's own files mixes them (a glob over
 * `events/*.parquet` would count theirs too). `force` writes there anyway.
 */
export function checkOutIsCorpus(out: string, force = false): void {
  if (force || !existsSync(out) || !statSync(out).isDirectory() || existsSync(manifestPath(out))) return;
  const foreign = readdirSync(out)
    .filter((name) => !BEFORE_MANIFEST.has(name))
    .sort();
  if (foreign.length === 0) return;
  const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? `, ... (${foreign.length} entries)` : '');
  throw new InputError(
    out,
    '',
    `is not empty and holds no Panta corpus (${shown})`,
    'choose a new or empty --out, or add --force to write the corpus among these files',
  );
}
