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
   * ssvp's tau when the spec took it from another corpus's calibration (`tau: {calibrate, from, arm}`): that
   * corpus (absolute), the arm whose CDS distribution was used, the bound, the gate encoder and the number.
   */
  tau_calibration?: { from: string; arm: string; calibrate: number; encoder: string; tau: number };
  /**
   * Only in a part of a job array (`panta run --shard I/N`): its runs' events and journals, no whitening
   * and no order parameters, which need every part's t = 0 answers; `panta merge` writes those.
   */
  shard?: ShardInfo;
  /**
   * Adaptive temperatures (`temperatures: {adaptive}`): each configuration group's temperatures after its
   * last round, by group key (core's adaptiveGroup); a part of a job array records its own groups'.
   */
  adaptive?: { grids: Record<string, number[]> };
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
  /**
   * sha256 of each field as written (manifestDigest): `panta verify` recomputes them, so a hand edit of a
   * count, the seed or a gold answer is named. Absent in corpora written before it (verify says so).
   */
  digest?: Record<string, string>;
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
  const { digest: _old, ...content } = { ...redactValue(manifest), prompts: manifest.prompts };
  // Digested as a reader parses it back (undefined fields dropped).
  const written = JSON.parse(JSON.stringify(content)) as Record<string, unknown>;
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ ...written, digest: manifestDigest(written) }, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

/** JSON with every object's keys sorted: the same value always gives the same text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Fields whose sub-fields are not digested one by one: `files` is checked file by file against the disk. */
const WHOLE_FIELDS = new Set(['files']);

/**
 * The digest of a manifest's content (every field but `digest`): sha256 of each field's canonical JSON, and,
 * so that a mismatch names what changed, of each sub-field of an object field (`events.written`) and of each
 * prompt's fields by id (`prompts.fq117.accepted`).
 */
export function manifestDigest(content: Record<string, unknown>): Record<string, string> {
  const digest: Record<string, string> = {};
  for (const [key, value] of Object.entries(content)) {
    if (key === 'digest') continue;
    digest[key] = sha256(canonicalJson(value));
    if (WHOLE_FIELDS.has(key)) continue;
    if (key === 'prompts' && Array.isArray(value)) {
      for (const p of value) {
        if (p === null || typeof p !== 'object' || typeof (p as { id?: unknown }).id !== 'string') continue;
        for (const [f, v] of Object.entries(p)) digest[`prompts.${(p as { id: string }).id}.${f}`] = sha256(canonicalJson(v));
      }
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [f, v] of Object.entries(value)) digest[`${key}.${f}`] = sha256(canonicalJson(v));
    }
  }
  return digest;
}

/**
 * The fields of a manifest that no longer match its digest, most specific first: `prompts.fq117.accepted`
 * rather than `prompts`; a field added or removed by hand is named too. Empty when it matches.
 */
export function manifestDigestMismatches(manifest: Record<string, unknown>): string[] {
  const stored = manifest.digest as Record<string, string>;
  const now = manifestDigest(manifest);
  const changed = [...new Set([...Object.keys(stored), ...Object.keys(now)])].filter((k) => stored[k] !== now[k]).sort();
  return changed.filter((k) => !changed.some((other) => other !== k && other.startsWith(`${k}.`)));
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
