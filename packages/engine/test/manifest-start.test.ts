import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backendSchema, sweepSpecSchema, type JudgeSpec } from '@panta/core';
import { readManifest, type Manifest } from '@panta/corpus';
import { createJudge } from '@panta/judge';
import { createBackend } from '@panta/llm';
import { backendMeta, judgeMeta, loadSweep, openEncoders, startManifest, sweepMeta } from '../src/index.js';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';

/** A manifest less the times it was written at, which two calls never share (and the digest, which covers them). */
const timeless = ({ started_at: _s, updated_at: _u, digest: _d, ...rest }: Manifest) => rest;

describe('the start manifest from plain metadata', () => {
  it('names each backend as the backend built from the same spec names itself', async () => {
    const specs = [
      { kind: 'surrogate' },
      { kind: 'surrogate', model: 'surrogate-b' },
      { kind: 'openai', base_url: 'http://127.0.0.1:9/v1', model: 'qwen' },
      { kind: 'anthropic', model: 'claude-x', api_key_env: 'PANTA_TEST_KEY' },
    ].map((s) => backendSchema.parse(s));
    for (const spec of specs) {
      const backend = createBackend(spec, [], 'spec.yaml', { env: { PANTA_TEST_KEY: 'k' } });
      try {
        expect(backendMeta(spec)).toEqual({ kind: backend.kind, model: backend.model });
      } finally {
        await backend.close();
      }
    }
  });

  it('names the judge as the judge built from the same spec names itself', async () => {
    for (const raw of [
      { kind: 'reference' },
      { kind: 'llm', backend: { kind: 'openai', base_url: 'http://127.0.0.1:9/v1', model: 'judge-m' } },
    ]) {
      const spec: JudgeSpec = sweepSpecSchema.shape.judge.parse(raw);
      const judge = createJudge(spec, 'spec.yaml', []);
      try {
        expect(judgeMeta(spec)).toEqual({ model: judge.model });
      } finally {
        await judge.close();
      }
    }
  });

  it('writes the same manifest from the spec and the opened encoders as from the live backend, judge and encoders', async () => {
    const dir = tempDir();
    const file = writeSpec(
      dir,
      `name: meta\ndataset: ${RHEON6}\ngeometries: [ring]\nsizes: [16]\ntemperatures: [0.5]\nseed: 3\nencoders: [{name: a, kind: hashing, dim: 64}, {name: b, kind: hashing, dim: 32}]\nout: ${join(dir, 'out')}\n`,
    );
    const sweep = loadSweep(file);
    mkdirSync(sweep.out, { recursive: true });
    const backend = createBackend(sweep.spec.backend, sweep.prompts, file);
    const judge = createJudge(sweep.spec.judge, file, sweep.prompts);
    const encoders = await openEncoders(sweep.spec.encoders, file);
    try {
      // The live objects satisfy SweepMeta as they are: what they report equals what the spec names.
      const live = startManifest(sweep, null, { backend, judge, encoders });
      const plain = startManifest(
        sweep,
        null,
        sweepMeta(
          sweep.spec,
          encoders.map((e) => ({ name: e.name, dim: e.dim, model: e.model })),
        ),
      );
      expect(timeless(plain)).toEqual(timeless(live));
      expect(plain.encoders).toEqual([
        { name: 'a', kind: 'hashing', dim: 64, model: encoders[0].model },
        { name: 'b', kind: 'hashing', dim: 32, model: encoders[1].model },
      ]);
      expect(plain.backend).toEqual({ kind: 'surrogate', model: backend.model, batch_invariant: true });
      expect(plain.judge).toEqual({ kind: 'reference', model: 'reference' });
      expect(timeless(readManifest(sweep.out)!)).toEqual(timeless(plain));
    } finally {
      await Promise.all([backend.close(), judge.close(), ...encoders.map((e) => e.close())]);
    }
  });

  it("keeps the first session's start time when a sweep resumes", () => {
    const dir = tempDir();
    const file = writeSpec(
      dir,
      `name: again\ndataset: ${RHEON6}\ngeometries: [ring]\nsizes: [16]\ntemperatures: [0.5]\nout: ${join(dir, 'out')}\n`,
    );
    const sweep = loadSweep(file);
    mkdirSync(sweep.out, { recursive: true });
    const meta = sweepMeta(sweep.spec, [{ name: 'h', dim: 8, model: 'm' }]);
    const first = startManifest(sweep, null, meta);
    const again = startManifest(sweep, { ...first, started_at: '2020-01-01T00:00:00.000Z' }, meta);
    expect(again.started_at).toBe('2020-01-01T00:00:00.000Z');
    expect(again.status).toBe('running');
  });
});
