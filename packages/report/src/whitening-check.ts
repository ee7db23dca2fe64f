import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { InputError } from '@panta/core';
import { manifestPath, whiteningDir } from '@panta/corpus';

/**
 * m and q are measured in a whitening fitted on a pool of t = 0 answers: two corpora fitted on different
 * pools measure the same run differently (docs/DESIGN.md#whitening), so comparing their m and q needs one whitening,
 * shared by `whitening: {from: ...}` (which copies the files byte for byte) or by gridding the arms in one
 * sweep. This compares the whitening files of the (prompt, encoder) pairs corpora share, by content.
 */

/** sha256 of each whitening file of a corpus, by `<prompt>__<encoder>`; empty before its sweep is measured. */
function whiteningDigests(dir: string): Map<string, string> {
  const folder = whiteningDir(dir);
  const out = new Map<string, string>();
  if (!existsSync(folder)) return out;
  for (const f of readdirSync(folder).sort()) {
    if (!f.endsWith('.parquet')) continue;
    out.set(
      f.slice(0, -'.parquet'.length),
      createHash('sha256')
        .update(readFileSync(`${folder}/${f}`))
        .digest('hex'),
    );
  }
  return out;
}

export interface WhiteningDifference {
  /** `<prompt>__<encoder>` */
  key: string;
  a: string;
  b: string;
}

/** The shared (prompt, encoder) pairs whose whitening differs between the first corpus and each other one. */
export function whiteningDifferences(dirs: readonly string[]): WhiteningDifference[] {
  for (const d of dirs)
    if (!existsSync(d) || !statSync(d).isDirectory() || !existsSync(manifestPath(d)))
      throw new InputError(d, '--compare', 'is not a corpus folder (no manifest.json)', 'give the folder of a corpus panta run wrote');
  const [first, ...others] = dirs;
  const base = whiteningDigests(first);
  const out: WhiteningDifference[] = [];
  for (const other of others) {
    for (const [key, digest] of whiteningDigests(other)) {
      const mine = base.get(key);
      if (mine !== undefined && mine !== digest) out.push({ key, a: first, b: other });
    }
  }
  return out;
}

/** One line saying which corpora's whitenings differ and how to make them comparable, or null when none differ. */
export function whiteningWarning(dirs: readonly string[]): string | null {
  const diffs = whiteningDifferences(dirs);
  if (diffs.length === 0) return null;
  const show = (d: string) => relative(process.cwd(), d) || d;
  const pairs = [...new Set(diffs.map((d) => show(d.b)))];
  const keys = [...new Set(diffs.map((d) => d.key.replace('__', '/')))];
  const listed = keys.slice(0, 3).join(', ') + (keys.length > 3 ? ` and ${keys.length - 3} more` : '');
  return (
    `${show(dirs[0])} and ${pairs.join(', ')} were whitened differently (${listed}): their magnetisation and cohesion are not comparable; ` +
    `run the others with whitening: {from: ${show(dirs[0])}}, or grid the arms in one sweep`
  );
}
