import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { orderParamsPath, runsTablePath, sha256File, whiteningPath, type Manifest } from '@panta/corpus';

/**
 * The files a manifest vouches for: the finalized shards and runs.parquet; once measured, order_params.parquet
 * and the whitening of every (prompt, encoder) too. Journals, logs and `.state` are working files, not listed.
 */
export function listedFiles(
  out: string,
  shards: readonly string[],
  measured: { promptIds: Iterable<string>; encoders: readonly { name: string }[] } | null,
): string[] {
  const listed = [...shards, runsTablePath(out)];
  if (measured) {
    listed.push(orderParamsPath(out));
    for (const p of measured.promptIds) for (const e of measured.encoders) listed.push(whiteningPath(out, p, e.name));
  }
  return listed;
}

/** Size and sha256 of each file, keyed by its path relative to `out` (as `panta verify` reads them). */
export async function fileChecksums(out: string, files: readonly string[]): Promise<Manifest['files']> {
  const sums: Manifest['files'] = {};
  for (const f of files) sums[relative(out, f)] = { bytes: statSync(f).size, sha256: await sha256File(f) };
  return sums;
}
