import { readFileSync } from 'node:fs';
import { SHARD_POLICY, sweepEvents, type BackendSpec, type JudgeSpec, type SweepSpec } from '@panta/core';
import { CORPUS_FORMAT, writeManifest, type Manifest } from '@panta/corpus';
import type { LoadedSweep } from './load.js';
import { whiteningOrigin } from './whitening-source.js';

/**
 * What the manifest says of the backend, judge and encoders: plain values, not the live objects, so a process
 * that only writes the corpus (the cluster's collector) need not open a backend to read its name. A live
 * backend, judge or encoder satisfies these types as it is.
 */
export interface SweepMeta {
  backend: { kind: string; model: string };
  judge: { model: string };
  /** In the spec's order; dims and models of onnx encoders are known once their model folder is read. */
  encoders: readonly { name: string; dim: number; model: string }[];
}

/** The backend as the spec names it: what `createBackend(spec).kind` and `.model` are. */
export function backendMeta(spec: BackendSpec): SweepMeta['backend'] {
  return { kind: spec.kind, model: spec.model };
}

/** The judge's model as `createJudge(spec).model` names it: `reference`, or the LLM judge's `kind:model`. */
export function judgeMeta(spec: JudgeSpec): SweepMeta['judge'] {
  return { model: spec.kind === 'reference' ? 'reference' : `${spec.backend.kind}:${spec.backend.model}` };
}

/** The manifest's metadata from the spec, with the encoders as opened (their dims and models). */
export function sweepMeta(spec: SweepSpec, encoders: SweepMeta['encoders']): SweepMeta {
  return { backend: backendMeta(spec.backend), judge: judgeMeta(spec.judge), encoders };
}

/** The code's version, in the manifest from the sweep's start (a report of a running sweep shows it). */
export function codeVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** What the manifest says of batch invariance: the spec's word, the surrogate's by construction, else unknown. */
export function batchInvariant(backend: SweepSpec['backend']): boolean | null {
  return backend.kind === 'surrogate' ? true : (backend.batch_invariant ?? null);
}

/**
 * The manifest as the sweep starts (or resumes): status running, nothing counted yet. A whitening taken
 * from another corpus is checked here against the encoders as opened (their dims), before it is written.
 */
export function startManifest(sweep: LoadedSweep, previous: Manifest | null, meta: SweepMeta): Manifest {
  const whitening = whiteningOrigin(sweep.spec, sweep.specFile, sweep.prompts, meta.encoders);
  const now = new Date().toISOString();
  const manifest: Manifest = {
    format: CORPUS_FORMAT,
    name: sweep.spec.name,
    status: 'running',
    fingerprint: sweep.fingerprint,
    spec_file: sweep.specFile,
    spec: sweep.spec,
    code: { panta: codeVersion(), node: process.version },
    seed: sweep.spec.seed ?? 0,
    backend: { kind: meta.backend.kind, model: meta.backend.model, batch_invariant: batchInvariant(sweep.spec.backend) },
    judge: { kind: sweep.spec.judge.kind, model: meta.judge.model },
    encoders: meta.encoders.map((e, i) => ({ name: e.name, kind: sweep.spec.encoders[i].kind, dim: e.dim, model: e.model })),
    prompts: sweep.prompts,
    runs: { planned: sweep.runs.length, complete: 0, failed: [] },
    events: { planned: sweepEvents(sweep.runs), written: 0 },
    tags: {},
    usage: { calls: 0, retries: 0, prompt_tokens: 0, completion_tokens: 0, cost: null, judge_calls: 0 },
    files: {},
    whitening,
    ...(sweep.tauSource ? { tau_calibration: sweep.tauSource } : {}),
    ...(sweep.shard
      ? { shard: { index: sweep.shard.index, count: sweep.shard.count, measured_by: 'panta merge' as const, policy: SHARD_POLICY } }
      : {}),
    started_at: previous?.started_at ?? now,
    updated_at: now,
  };
  writeManifest(sweep.out, manifest);
  return manifest;
}
