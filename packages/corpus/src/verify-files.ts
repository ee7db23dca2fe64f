import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { CORPUS_FILES } from './corpus-paths.js';

const F = CORPUS_FILES;

/** Folders whose every file is the corpus's data: a file the manifest does not list there is a stray. */
const DATA_DIRS = [F.events, F.whitening, F.judges];
/** Working files and folders: journals, logs, a report, never data a query of the corpus reads. */
const SKIPPED = [F.state, F.report, join(F.events, F.parts)];

/**
 * Files in the corpus that its manifest does not list: any file under events/, whitening/ or judges/, and any
 * Parquet file elsewhere (but .state/, report/ and the parts of unfinished runs). A stray shard in events/
 * would be counted by every `events/*.parquet` query.
 */
export function unlistedFiles(out: string, listed: Iterable<string>): string[] {
  const known = new Set([...listed].map((f) => f.split('/').join(sep)));
  const strays: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      const rel = relative(out, path);
      if (SKIPPED.includes(rel)) continue;
      if (entry.isDirectory()) walk(path);
      else if (!known.has(rel) && (DATA_DIRS.some((d) => rel.startsWith(`${d}${sep}`)) || entry.name.endsWith('.parquet')))
        strays.push(rel);
    }
  };
  walk(out);
  return strays;
}
