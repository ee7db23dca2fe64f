import { gridsRecord } from './adaptive-rounds.js';
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { InputError, sweepEvents } from '@panta/core';
import {
  controlDir,
  controlJournalPath,
  eventsDir,
  judgeCachePath,
  logPath,
  manifestPath,
  runJournalPath,
  shardPath,
  stateDir,
  type Manifest,
} from '@panta/corpus';
import { finishSweep, type SweepSummary } from './finish.js';
import { readParts, type PartFolder } from './merge-parts.js';
import { checkOutFolder } from './out-folder.js';

export interface MergeOptions {
  /** Called once the parts are checked and before anything is written (the CLI prints what it merges). */
  onPlan?(plan: { parts: number; runs: number; events: number; out: string }): void;
  /** Called with the unfinished folders of interrupted merges into the same OUT that were removed. */
  onLeftovers?(removed: string[]): void;
}

/** The hidden folder a merge into `out` builds its corpus in (renamed to `out` at the end). */
export function mergeTempFolder(out: string, pid = process.pid): string {
  return join(dirname(resolve(out)), `.${basename(resolve(out))}.merging-${pid}`);
}

/** Whether a process with this pid runs on this machine (EPERM: it runs, as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes what merges into `out` that were killed (kill -9, a lost node) left next to it: their hidden
 * folders whose process is gone. A merge still running (its pid alive) keeps its folder. Returns the removed paths.
 */
export function removeMergeLeftovers(out: string): string[] {
  const at = dirname(resolve(out));
  const prefix = `.${basename(resolve(out))}.merging-`;
  let names: string[];
  try {
    names = readdirSync(at);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = name.slice(prefix.length);
    if (!/^[1-9]\d*$/.test(pid) || Number(pid) === process.pid || alive(Number(pid))) continue;
    rmSync(join(at, name), { recursive: true, force: true });
    removed.push(join(at, name));
  }
  return removed;
}

const OUT_FIX = 'give a new (or empty) folder for the merged corpus';

/** `inner` is `outer` or lies inside it. */
function within(inner: string, outer: string): boolean {
  const r = relative(outer, inner);
  return r === '' || (!r.startsWith('..') && !r.startsWith(sep));
}

/** OUT must not exist, or be an empty folder, and must not overlap a part. */
function checkMergeOut(given: string, out: string, parts: readonly PartFolder[]): void {
  for (const p of parts) {
    if (within(out, p.dir) || within(p.dir, out)) throw new InputError(given, '', `overlaps the part ${p.given}`, OUT_FIX);
  }
  if (existsSync(out)) {
    if (!statSync(out).isDirectory()) throw new InputError(given, '', 'is a file, not a folder', OUT_FIX);
    if (readdirSync(out).length > 0)
      throw new InputError(given, '', 'already exists and is not empty', `${OUT_FIX} (or delete it to merge again)`);
  }
  checkOutFolder(out);
}

/** A part's file in the merged corpus: a hard link where the file system allows (shards are never rewritten), else a copy. */
function place(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/** Appends a part's journal; a torn last line (a crash mid-append) stays a line of its own, which readers skip. */
function appendJournal(from: string, to: string): void {
  if (!existsSync(from)) return;
  const text = readFileSync(from, 'utf8');
  if (text.length === 0) return;
  writeFileSync(to, text.endsWith('\n') ? text : `${text}\n`, { flag: 'a' });
}

/** Events and journals of every part into `tmp`: shards, run records, sweep-boundary journals, verdicts, logs. */
function gather(tmp: string, parts: readonly PartFolder[]): void {
  mkdirSync(eventsDir(tmp), { recursive: true });
  mkdirSync(stateDir(tmp));
  for (const p of parts) {
    for (const run of p.runs) {
      place(shardPath(p.dir, run.runId), shardPath(tmp, run.runId));
      const control = controlJournalPath(p.dir, run.runId);
      if (!existsSync(control)) continue;
      mkdirSync(controlDir(tmp), { recursive: true });
      copyFileSync(control, controlJournalPath(tmp, run.runId));
    }
    appendJournal(runJournalPath(p.dir), runJournalPath(tmp));
    appendJournal(judgeCachePath(p.dir), judgeCachePath(tmp));
    // The parts' logs, one after the other: the runs' history (retries, resumes) stays with the corpus.
    appendJournal(logPath(p.dir), logPath(tmp));
  }
}

/** The parts agree, or one said false (then the corpus is not reproducible as a whole), or it is unknown. */
function mergedBatchInvariance(parts: readonly PartFolder[]): boolean | null {
  const said = parts.map((p) => p.manifest.backend.batch_invariant ?? null);
  if (said.every((v) => v === said[0])) return said[0];
  return said.includes(false) ? false : null;
}

/** The manifest a single run would start from, made of the parts' (they differ only in counts and times). */
function startingManifest(parts: readonly PartFolder[], runs: number, events: number): Manifest {
  const { shard: _shard, ...first } = parts[0].manifest;
  const started = parts.map((p) => p.manifest.started_at).sort()[0];
  return {
    ...first,
    status: 'running',
    backend: { ...first.backend, batch_invariant: mergedBatchInvariance(parts) },
    runs: { planned: runs, complete: 0, failed: [] },
    events: { planned: events, written: 0 },
    tags: {},
    usage: { calls: 0, retries: 0, prompt_tokens: 0, completion_tokens: 0, cost: null, judge_calls: 0 },
    files: {},
    ...mergedGrids(parts),
    started_at: started,
    updated_at: new Date().toISOString(),
  };
}

/** Adaptive temperatures: every part's groups' grids (each part holds whole groups), keyed as a whole sweep keys them. */
function mergedGrids(parts: readonly PartFolder[]): Pick<Manifest, 'adaptive'> {
  const grids = new Map(parts.flatMap((p) => Object.entries(p.manifest.adaptive?.grids ?? {})));
  return grids.size > 0 ? { adaptive: { grids: gridsRecord(grids) } } : {};
}

/**
 * Unions the parts of a job array (`panta run --shard I/N`, every I) into one corpus at `outPath`: the
 * events and journals of every part, then the final measurement of a single run (finishSweep: whitening
 * pooled over every part's t = 0 answers per prompt and encoder, order parameters, runs.parquet, manifest).
 * The corpus equals one `panta run` of the same spec but for timings. It is built in a hidden folder next
 * to OUT and renamed into place at the end: a refused or failed merge leaves nothing in OUT.
 */
export async function mergeParts(outPath: string, partPaths: readonly string[], options: MergeOptions = {}): Promise<SweepSummary> {
  if (outPath.trim() === '') throw new InputError('OUT', '', 'an empty path', 'give the folder of the merged corpus, e.g. runs/mine');
  const { parts, sweep } = readParts(partPaths);
  const out = resolve(outPath);
  checkMergeOut(outPath, out, parts);
  const events = sweepEvents(sweep.runs);
  options.onPlan?.({ parts: parts.length, runs: sweep.runs.length, events, out });
  mkdirSync(dirname(out), { recursive: true });
  const leftovers = removeMergeLeftovers(out);
  if (leftovers.length > 0) options.onLeftovers?.(leftovers);
  const tmp = mergeTempFolder(out);
  rmSync(tmp, { recursive: true, force: true });
  try {
    gather(tmp, parts);
    const judgeCalls = parts.reduce((s, p) => s + (p.manifest.usage?.judge_calls ?? 0), 0);
    const summary = await finishSweep(
      { ...sweep, out: tmp },
      startingManifest(parts, sweep.runs.length, events),
      encoderColumns(parts[0].manifest),
      { calls: judgeCalls },
    );
    checkShardChecksums(tmp, parts);
    if (existsSync(out)) rmdirSync(out);
    renameSync(tmp, out);
    return { ...summary, out };
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true });
    throw error;
  }
}

function encoderColumns(manifest: Manifest): { name: string; dim: number }[] {
  return manifest.encoders.map((e) => ({ name: e.name, dim: e.dim }));
}

/**
 * Each shard as merged against the checksum its part's manifest recorded (the merge hashes every file for
 * its own manifest anyway): a shard changed or damaged since its part finished is refused, naming it.
 */
function checkShardChecksums(tmp: string, parts: readonly PartFolder[]): void {
  const merged = (JSON.parse(readFileSync(manifestPath(tmp), 'utf8')) as Manifest).files;
  for (const p of parts) {
    for (const run of p.runs) {
      // Keyed as finishSweep keys them, in both manifests.
      const name = relative(tmp, shardPath(tmp, run.runId));
      const recorded = p.manifest.files[name];
      if (recorded && merged[name] && recorded.sha256 !== merged[name].sha256) {
        throw new InputError(
          join(p.given, name),
          '',
          `does not match its checksum in ${manifestPath(p.given)}: damaged or changed since the part finished`,
          `run panta verify ${p.given}, then rerun that part into a new folder`,
        );
      }
    }
  }
}
