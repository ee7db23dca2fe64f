import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { InputError, type Prompt, type SweepSpec } from '@panta/core';
import { manifestPath, whiteningPath, type Manifest, type WhiteningMode, type WhiteningOrigin } from '@panta/corpus';

/**
 * `whitening: {from: CORPUS}`: a sweep measured in the basis another corpus fitted, so that the two compare
 * (m and q depend on the whitening pool: the same run reads another m under another whitening). Every check
 * runs before anything is written; the copied files' checksums go into the manifest.
 */

const FIELD = 'whitening.from';

/** The folder `whitening.from` names, absolute (relative to the spec file), or undefined when the sweep fits its own. */
export function whiteningFromDir(spec: Pick<SweepSpec, 'whitening'>, specFile: string): string | undefined {
  return typeof spec.whitening === 'object' ? resolve(dirname(specFile), spec.whitening.from) : undefined;
}

/** What measureSweep is given: zca or raw, or the other corpus's folder. */
export function whiteningMode(spec: Pick<SweepSpec, 'whitening'>, specFile: string): WhiteningMode {
  const from = whiteningFromDir(spec, specFile);
  return from !== undefined ? { from } : (spec.whitening as 'zca' | 'raw');
}

/** The other corpus's manifest, or a one-line refusal naming the spec and the field. */
function sourceManifest(dir: string, specPath: string): Manifest {
  const fix = 'give the folder of a complete corpus (relative to the spec file), or use whitening: zca';
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError(specPath, FIELD, `${dir} is not a folder`, fix);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath(dir), 'utf8')) as Manifest;
  } catch {
    throw new InputError(specPath, FIELD, `${dir} holds no readable manifest.json: it is not a Panta corpus`, fix);
  }
  if (manifest.status !== 'complete' || manifest.shard)
    throw new InputError(
      specPath,
      FIELD,
      `${dir} is not a complete corpus (status ${manifest.status}${manifest.shard ? ', a part of a job array' : ''}): it has no whitening yet`,
      'finish (or merge) that sweep first, or use whitening: zca',
    );
  return manifest;
}

/**
 * Refuses, in one line naming the spec and `whitening.from`, another corpus that lacks a whitening this
 * sweep needs (a prompt or an encoder it did not have) or whose encoder has another dimension. `encoders`
 * are those whose dimension is known (a hashing encoder's from the spec before anything is opened; every
 * encoder once opened); the others are checked by name only.
 */
export function checkWhiteningSource(
  spec: SweepSpec,
  specFile: string,
  specPath: string,
  prompts: readonly Pick<Prompt, 'id'>[],
  encoders: readonly { name: string; dim?: number }[],
): Manifest | undefined {
  const dir = whiteningFromDir(spec, specFile);
  if (dir === undefined) return undefined;
  const manifest = sourceManifest(dir, specPath);
  const theirs = new Map(manifest.encoders.map((e) => [e.name, e]));
  const where = relative(process.cwd(), dir) || dir;
  for (const e of encoders) {
    const other = theirs.get(e.name);
    if (!other)
      throw new InputError(
        specPath,
        FIELD,
        `${where} has no encoder "${e.name}" (it has ${manifest.encoders.map((x) => x.name).join(', ')})`,
        `whiten from a corpus made with encoder ${e.name}, or drop it from this sweep's encoders`,
      );
    if (e.dim !== undefined && other.dim !== e.dim)
      throw new InputError(
        specPath,
        FIELD,
        `encoder "${e.name}" has dimension ${e.dim} here and ${other.dim} in ${where}`,
        'use the same encoder (model and dim) in both sweeps, or whiten from a corpus that has it',
      );
  }
  for (const p of prompts) {
    for (const e of encoders) {
      if (!existsSync(whiteningPath(dir, p.id, e.name)))
        throw new InputError(
          specPath,
          FIELD,
          `${where} has no whitening for prompt ${p.id} and encoder ${e.name}`,
          `whiten from a corpus that ran prompt ${p.id}, or remove it from this sweep's prompts`,
        );
    }
  }
  return manifest;
}

/**
 * What the manifest records of the whitening, checked against the encoders as opened: fitted here, or the
 * other corpus with each file's sha256 (the copy this corpus will hold has the same).
 */
export function whiteningOrigin(
  spec: SweepSpec,
  specFile: string,
  prompts: readonly Pick<Prompt, 'id'>[],
  encoders: readonly { name: string; dim: number }[],
): WhiteningOrigin {
  const manifest = checkWhiteningSource(spec, specFile, specFile, prompts, encoders);
  const dir = whiteningFromDir(spec, specFile);
  if (!manifest || dir === undefined) return { source: 'fitted', mode: spec.whitening as 'zca' | 'raw' };
  const files: Record<string, string> = {};
  for (const p of prompts)
    for (const e of encoders)
      files[`${p.id}__${e.name}`] = createHash('sha256')
        .update(readFileSync(whiteningPath(dir, p.id, e.name)))
        .digest('hex');
  return { source: 'corpus', corpus: dir, name: manifest.name, fingerprint: manifest.fingerprint, files };
}
