import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Crash safety for files written by DuckDB: the data is flushed to disk under a temporary name, then
 * renamed into place and the rename itself flushed, so after a crash a final name holds either nothing
 * or a complete file. (DuckDB's COPY closes its file, but whether it fsyncs is not its documented contract.)
 */

export async function fsyncFile(path: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Flushes a directory entry change (rename, unlink). Best effort where directories cannot be opened. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(dir, 'r');
  } catch {
    return;
  }
  try {
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  } finally {
    await fh.close();
  }
}

/** fsync `tmp`, rename it to `final`, fsync the folder. */
export async function commitFile(tmp: string, final: string): Promise<void> {
  await fsyncFile(tmp);
  await rename(tmp, final);
  await fsyncDir(dirname(final));
}

export async function removeQuietly(path: string): Promise<void> {
  await rm(path, { force: true, recursive: true });
}

/** True when `path` exists; false only for ENOENT (other errors are real). */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
