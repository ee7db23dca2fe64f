import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  DEFAULT_TEMPLATE,
  InputError,
  parseEdgeList,
  planSweep,
  promptSchema,
  shardLabel,
  sweepPartition,
  shardWeigherFor,
  sweepSpecSchema,
  type Edge,
  type Prompt,
  type RunPlan,
} from '@panta/core';
import { CORPUS_FILES, CORPUS_FORMAT, manifestPath, shardPath, type Manifest, type ShardInfo } from '@panta/corpus';
import { codeVersion } from './manifest-start.js';
import type { LoadedSweep } from './load.js';

/** A part of a job array as `panta merge` found it: its folder, manifest and runs. */
export interface PartFolder {
  /** As given on the command line (for messages), and absolute. */
  given: string;
  dir: string;
  manifest: Manifest;
  shard: ShardInfo;
  runs: RunPlan[];
}

const PART_FIX = 'give the --out folders that panta run SPEC --shard I/N wrote, one per I';

/** A part's manifest, or bad input naming the folder or the file. */
function readPartManifest(given: string): { dir: string; manifest: Manifest; shard: ShardInfo } {
  const dir = resolve(given);
  if (!existsSync(dir)) throw new InputError(given, '', 'no such folder', PART_FIX);
  if (!statSync(dir).isDirectory()) throw new InputError(given, '', 'is a file, not a folder', PART_FIX);
  const file = manifestPath(dir);
  if (!existsSync(file))
    throw new InputError(given, '', `holds no ${CORPUS_FILES.manifest}: not a part of a job array, or its run never started`, PART_FIX);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(
      file,
      '',
      `unreadable manifest: ${code ? `cannot be read (${code})` : `not valid JSON (${(e as Error).message})`}`,
      'run that part again with the same panta run --shard command',
    );
  }
  if (
    manifest === null ||
    typeof manifest !== 'object' ||
    typeof manifest.fingerprint !== 'string' ||
    typeof manifest.code?.panta !== 'string'
  ) {
    throw new InputError(file, '', 'not a Panta manifest (no fingerprint or code version)', PART_FIX);
  }
  if (manifest.format !== CORPUS_FORMAT) {
    throw new InputError(
      file,
      'format',
      `the part was written in format ${JSON.stringify(manifest.format)}, and this Panta merges ${CORPUS_FORMAT}`,
      'merge with the Panta version that wrote the parts',
    );
  }
  const shard = manifest.shard;
  if (!shard) throw new InputError(file, 'shard', `${given} is a whole corpus, not a part of a job array`, PART_FIX);
  if (!Number.isInteger(shard.count) || !Number.isInteger(shard.index) || shard.index < 1 || shard.index > shard.count) {
    throw new InputError(
      file,
      'shard',
      `${JSON.stringify(shard)} is not part I of N`,
      'run that part again with the same panta run --shard command',
    );
  }
  return { dir, manifest, shard };
}

/** Same folder given twice under two names (a link, a trailing slash) is the same part. */
function identity(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * Reads and checks the parts of one job array, writing nothing: each is a part, all of one sweep
 * (fingerprint), one Panta version (this one: the merge measures with its code), one array size, each index
 * once, none missing, each complete with a shard for every run of its slice. Any problem is one line.
 */
export function readParts(given: readonly string[]): { parts: PartFolder[]; sweep: Omit<LoadedSweep, 'out'> } {
  if (given.length === 0) throw new InputError('panta merge', 'PART', 'no parts given', PART_FIX);
  const read: ReadPart[] = given.map((g) => ({ given: g, ...readPartManifest(g) }));
  checkDistinctFolders(read);
  const first = read[0];
  checkOneSweep(read, first);
  const count = first.shard.count;
  const specFile = first.manifest.spec_file;
  const byIndex = partsByIndex(read, count, specFile);
  checkComplete(read, count, specFile);
  const policy = first.shard.policy ?? 'events';
  checkOnePolicy(read, first, policy);
  // Adaptive temperatures: each part holds whole groups and records their grids; the sweep's are their union.
  const grids = new Map(read.flatMap((p) => Object.entries(p.manifest.adaptive?.grids ?? {})));
  const sweep = sweepOfManifest(first.manifest, manifestPath(first.dir), grids);
  const dealt = sweepPartition(sweep.spec, sweep.runs, count, shardWeigherFor(policy, sweep.spec, sweep.edgeLists));
  return { parts: partsWithRuns(byIndex, sweep, dealt, count, specFile), sweep };
}

type ReadPart = ReturnType<typeof readPartManifest> & { given: string };

/** No folder given twice (under two names, a link, a relative path). */
function checkDistinctFolders(read: readonly ReadPart[]): void {
  const seen = new Map<string, string>();
  for (const p of read) {
    const id = identity(p.dir);
    const before = seen.get(id);
    if (before !== undefined) throw new InputError(p.given, '', `is given twice (also as ${before})`, 'give each part once');
    seen.set(id, p.given);
  }
}

/** Every part of one sweep, written by one Panta version (this one), of one array size. */
function checkOneSweep(read: readonly ReadPart[], first: ReadPart): void {
  const mine = codeVersion();
  for (const p of read) {
    const file = manifestPath(p.dir);
    if (p.manifest.fingerprint !== first.manifest.fingerprint) {
      throw new InputError(
        file,
        'fingerprint',
        `${p.given} is a part of another sweep than ${first.given} (fingerprint ${p.manifest.fingerprint.slice(0, 12)} vs ${first.manifest.fingerprint.slice(0, 12)})`,
        'merge the parts of one spec, each run with that spec, seed and dataset',
      );
    }
    if (p.manifest.code.panta !== first.manifest.code.panta) {
      throw new InputError(
        file,
        'code.panta',
        `${p.given} was written by Panta ${p.manifest.code.panta}, ${first.given} by Panta ${first.manifest.code.panta}`,
        'run every part with one Panta version',
      );
    }
    if (p.manifest.code.panta !== mine) {
      throw new InputError(
        file,
        'code.panta',
        `${p.given} was written by Panta ${p.manifest.code.panta}, and this is Panta ${mine}`,
        `merge with Panta ${p.manifest.code.panta}, the version that wrote the parts`,
      );
    }
    if (p.shard.count !== first.shard.count) {
      throw new InputError(
        file,
        'shard.count',
        `${p.given} is ${shardLabel(p.shard)}, ${first.given} ${shardLabel(first.shard)}`,
        'merge the parts of one array size (one --shard I/N with the same N)',
      );
    }
  }
}

/** The parts by their index, each index once and none missing. */
function partsByIndex(read: readonly ReadPart[], count: number, specFile: string): Map<number, ReadPart> {
  const byIndex = new Map<number, ReadPart>();
  for (const p of read) {
    const other = byIndex.get(p.shard.index);
    if (other)
      throw new InputError(
        p.given,
        'shard.index',
        `${p.given} and ${other.given} are both ${shardLabel(p.shard)}`,
        'give each part once, one folder per I',
      );
    byIndex.set(p.shard.index, p);
  }
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0) {
    const listed = missing.length > 5 ? `${missing.slice(0, 5).join(', ')}, ... (${missing.length} in all)` : missing.join(', ');
    throw new InputError(
      'panta merge',
      'PART',
      `part${missing.length === 1 ? '' : 's'} ${listed} of ${count} missing (given: ${[...byIndex.keys()].sort((a, b) => a - b).join(', ')})`,
      `run each missing part (panta run ${specFile} --shard I/${count} --out DIR) and give all ${count} folders`,
    );
  }
  return byIndex;
}

/** Every part complete. */
function checkComplete(read: readonly ReadPart[], count: number, specFile: string): void {
  for (const p of read) {
    if (p.manifest.status !== 'complete') {
      throw new InputError(
        manifestPath(p.dir),
        'status',
        `${shardLabel(p.shard)} is not complete (status ${p.manifest.status}, ${p.manifest.runs.complete} of ${p.manifest.runs.planned} runs)`,
        `resume it: panta run ${specFile} --shard ${p.shard.index}/${count} --out ${p.given}`,
      );
    }
  }
}

/** Every part's runs dealt by one policy. */
function checkOnePolicy(read: readonly ReadPart[], first: ReadPart, policy: string): void {
  for (const p of read)
    if ((p.shard.policy ?? 'events') !== policy)
      throw new InputError(
        manifestPath(p.dir),
        'shard.policy',
        `${p.given} had its runs dealt by ${p.shard.policy ?? 'events'}, ${first.given} by ${policy}`,
        'merge the parts of one array, every part run with one Panta version',
      );
}

/** The parts in index order, each with the runs dealt to it, each of which has a shard there. */
function partsWithRuns(
  byIndex: Map<number, ReadPart>,
  sweep: Omit<LoadedSweep, 'out'>,
  dealt: ArrayLike<number>,
  count: number,
  specFile: string,
): PartFolder[] {
  return [...byIndex.keys()]
    .sort((a, b) => a - b)
    .map((i) => {
      const p = byIndex.get(i)!;
      const runs = sweep.runs.filter((_, r) => dealt[r] === i - 1);
      const absent = runs.find((r) => !existsSync(shardPath(p.dir, r.runId)));
      if (absent) {
        throw new InputError(
          p.given,
          'events',
          `${shardLabel(p.shard)} has no shard of its run ${absent.runId}`,
          `resume it: panta run ${specFile} --shard ${i}/${count} --out ${p.given}`,
        );
      }
      return { ...p, runs };
    });
}

/**
 * The sweep a part's manifest describes, planned as `panta verify` plans it: its spec, prompts and the
 * edge lists next to its spec file. The merge needs the grid, not the backend or the encoders.
 */
function sweepOfManifest(manifest: Manifest, file: string, grids: Map<string, number[]>): Omit<LoadedSweep, 'out'> {
  const parsed = sweepSpecSchema.safeParse(manifest.spec);
  if (!parsed.success)
    throw new InputError(file, 'spec', 'the spec it records is not a valid sweep spec', 'run the parts again with this Panta version');
  const spec = parsed.data;
  const prompts: Prompt[] = manifest.prompts.map((p) => promptSchema.parse(p));
  const edgeLists = new Map<string, Edge[]>();
  spec.geometries.forEach((g, i) => {
    if (g.kind !== 'edges' || edgeLists.has(g.path)) return;
    const edges = resolve(dirname(manifest.spec_file), g.path);
    if (!existsSync(edges)) {
      throw new InputError(
        manifest.spec_file,
        `geometries[${i}].path`,
        `edge list ${edges} is missing: the grid cannot be planned`,
        'restore the edge list the parts were run with, at that path',
      );
    }
    edgeLists.set(g.path, parseEdgeList(readFileSync(edges, 'utf8'), edges));
  });
  const runs = planSweep(spec, prompts, manifest.spec_file, edgeLists, {}, grids);
  return {
    specFile: manifest.spec_file,
    spec,
    prompts,
    template: DEFAULT_TEMPLATE,
    armFiles: {},
    edgeLists,
    runs,
    fingerprint: manifest.fingerprint,
  };
}
