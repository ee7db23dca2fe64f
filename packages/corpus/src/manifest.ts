import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { InputError, redactValue } from '@panta/core';
import { manifestPath } from './corpus-paths.js';

/**
 * The corpus layout's version: 2 adds `reply_status` to event rows, `drift_tolerance` to runs.parquet and
 * `fallback` to the whitening files. A resume refuses a folder of another version (its shards would lack
 * columns), naming both.
 */
export const CORPUS_FORMAT = 'panta-corpus/2';

/** manifest.json: what the corpus is, how it was made, and checksums of its files. */
export interface Manifest {
  format: typeof CORPUS_FORMAT;
  name: string;
  status: 'running' | 'complete' | 'failed';
  /** Digest of everything that determines the corpus; a resume refuses a corpus of another fingerprint. */
  fingerprint: string;
  spec_file: string;
  spec: unknown;
  code: { panta: string; node: string };
  seed: number;
  /**
   * batch_invariant: whether the model's answers do not depend on the batch a request lands in, so that a
   * rerun reproduces the corpus: the spec's `backend.batch_invariant` (vLLM with VLLM_BATCH_INVARIANT=1),
   * true for the surrogate (a function of the event's seed), null when unknown.
   */
  backend: { kind: string; model: string; batch_invariant?: boolean | null };
  judge: { kind: string; model: string };
  encoders: { name: string; kind: string; dim: number; model: string }[];
  prompts: unknown[];
  runs: { planned: number; complete: number; failed: string[] };
  events: { planned: number; written: number };
  tags: Record<string, number>;
  /**
   * LLM calls (retries included) and tokens over the whole sweep, every session added up; cost when the
   * backend has a price table (its currency); calls the LLM judge made in the last session.
   */
  usage: { calls: number; retries: number; prompt_tokens: number; completion_tokens: number; cost: number | null; judge_calls: number };
  files: Record<string, { bytes: number; sha256: string }>;
  /** Where the whitening files came from; absent in corpora made before `whitening: {from}` (fitted). */
  whitening?: WhiteningOrigin;
  /**
   * Only in a part of a job array (`panta run --shard I/N`): its runs' events and journals, no whitening
   * and no order parameters, which need every part's t = 0 answers; `panta merge` writes those.
   */
  shard?: ShardInfo;
  /**
   * Judges that re-tagged the corpus after the sweep (`panta judge`): each fills a `tag_<name>` column of the
   * event shards and has its own order parameters and runs.parquet under judges/<name>/. `judge` above stays
   * the sweep's own, whose `tag` the dynamics saw.
   */
  judges?: PosthocJudge[];
  /** Post-hoc passes in the order they finished (`panta embed`, `panta judge`). */
  posthoc?: { pass: 'embed' | 'judge'; name: string; replaced: boolean; finished_at: string }[];
  started_at: string;
  updated_at: string;
}

/**
 * Where a corpus's whitening came from: fitted on its own t = 0 answers (zca, or raw), or copied from
 * another corpus (its folder, name and fingerprint, and each copied file's sha256 by `<prompt>__<encoder>`).
 */
export type WhiteningOrigin =
  | { source: 'fitted'; mode: 'zca' | 'raw' }
  | { source: 'corpus'; corpus: string; name: string; fingerprint: string; files: Record<string, string> };

export interface PosthocJudge {
  name: string;
  kind: string;
  model: string;
  /** The judge's calls to its model (its verdict cache spares repeated answers, and a resumed pass's). */
  calls: number;
  /** Answers per tag, as `tags` above counts the sweep's own. */
  tags: Record<string, number>;
}

export interface ShardInfo {
  index: number;
  count: number;
  /** Where the final measurement comes from. */
  measured_by: 'panta merge';
  /** How the array's runs were dealt to its parts (core's ShardPolicy); absent: by events (Panta before `gpu-time`). */
  policy?: 'gpu-time' | 'events';
}

export { manifestPath } from './corpus-paths.js';

export function readManifest(out: string): Manifest | null {
  const file = manifestPath(out);
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
}

/**
 * The manifest of a folder a sweep is about to write into, or null for a folder without one. A damaged
 * manifest is bad input naming the file: writing on would mix whatever the folder holds with a new sweep.
 */
export function readManifestToResume(out: string): Manifest | null {
  const file = manifestPath(out);
  const fix = `restore ${file} to resume the sweep, or choose another --out (or delete ${out} to start over)`;
  let manifest: unknown;
  try {
    if (!existsSync(file)) return null;
    manifest = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'EISDIR' ? 'a folder, not a file' : code ? `cannot be read (${code})` : `not valid JSON (${(e as Error).message})`;
    throw new InputError(file, '', `unreadable manifest: ${why}`, fix);
  }
  if (
    manifest === null ||
    typeof manifest !== 'object' ||
    Array.isArray(manifest) ||
    typeof (manifest as Manifest).fingerprint !== 'string'
  ) {
    throw new InputError(file, '', 'not a Panta manifest (no fingerprint)', fix);
  }
  const format = (manifest as { format?: unknown }).format;
  if (format !== CORPUS_FORMAT) {
    throw new InputError(
      file,
      'format',
      `the corpus was written in format ${JSON.stringify(format)}, and this Panta writes ${CORPUS_FORMAT}`,
      `finish it with the Panta version that started it, or choose another --out (or delete ${out} to start over)`,
    );
  }
  return manifest as Manifest;
}

/**
 * Written whole to a temporary name, then renamed: a reader never sees half a manifest. Redacted: the spec it
 * copies can hold a base_url with credentials, and no key a server echoed may reach the corpus. The prompts
 * are the dataset's own text, stored as they are in every event row and read back by verify: kept as given.
 */
export function writeManifest(out: string, manifest: Manifest): void {
  const file = manifestPath(out);
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ ...redactValue(manifest), prompts: manifest.prompts }, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
