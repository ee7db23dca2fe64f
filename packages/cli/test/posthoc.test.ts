import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { RHEON6, pantaAsync, tempDir, writeSpec, pantaInProcess as cli } from '../../../test/helpers.js';

const SPEC = `name: posthoc-cli
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [16]
temperatures: [0.5, 1.2]
sweeps: 2
seed: 3
`;

const oneLine = (r: { stderr: string }) => r.stderr.trim().split('\n');

describe('panta embed and panta judge on the command line', () => {
  // 180 s as the next: its first command loads the CLI into this process, which takes a loaded machine a while.
  it('embed with --encoder twice adds both columns, in order; the same name twice is refused before anything is written, and so is a second --judge', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    expect((await cli(['run', writeSpec(dir, SPEC.replace('[0.5, 1.2]', '[0.5]')), '--out', out])).code).toBe(0);
    const before = readFileSync(join(out, 'manifest.json'), 'utf8');
    // The binary: a refusal before anything is written, as the process reports it.
    const twice = await pantaAsync(['embed', out, '--encoder', 'a1:hashing:16', '--encoder', 'a1:hashing:32']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toBe(
      'panta: --encoder: the name "a1" is given twice (a1:hashing:16 and a1:hashing:32); fix: give each encoder its own name\n',
    );
    expect(readFileSync(join(out, 'manifest.json'), 'utf8')).toBe(before);
    const both = await cli(['embed', out, '--encoder', 'a1:hashing:16', '--encoder', 'a2:hashing:8']);
    expect(both.code, both.stderr).toBe(0);
    expect(both.stdout).toMatch(/^complete: emb_a1 \(hashing\) over 48 answers.*\ncomplete: emb_a2 \(hashing\) over 48 answers/m);
    const [row] = await queryRows(
      `SELECT count(emb_a1)::INTEGER AS a1, count(emb_a2)::INTEGER AS a2 FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(row).toEqual({ a1: 48, a2: 48 });
    const m = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { encoders: { name: string }[] };
    expect(m.encoders.map((e) => e.name)).toEqual(['hashing', 'a1', 'a2']);
    // panta judge takes one judge: a second --judge (or --name) is refused, not silently kept in its place.
    const judges = await cli(['judge', out, '--judge', '{kind: reference}', '--judge', '{kind: llm}']);
    expect(judges.code).toBe(2);
    expect(judges.stderr).toBe(
      'panta: judge: --judge: given twice ("{kind: reference}" and "{kind: llm}"), and only one is used; fix: run panta judge once per judge\n',
    );
  }, 180_000);

  it('embed and judge a corpus, refuse a name it has (exit 2, one line, nothing changed) and bad option values, and verify after each', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const out = join(dir, 'out');
    expect((await cli(['run', spec, '--out', out])).code).toBe(0);
    const manifest = () => readFileSync(join(out, 'manifest.json'), 'utf8');

    const embedded = await cli(['embed', out, '--encoder', 'mini:hashing:64']);
    expect(embedded.code).toBe(0);
    expect(embedded.stdout).toMatch(/^complete: emb_mini \(hashing\) over 96 answers, 2 of 2 shards rewritten/m);
    expect((await cli(['verify', out])).code).toBe(0);
    const after = manifest();

    const again = await cli(['embed', out, '--encoder', 'mini:hashing:32']);
    expect(again.code).toBe(2);
    expect(oneLine(again)).toHaveLength(1);
    expect(again.stderr).toMatch(/encoders: the corpus has an encoder named mini already; fix: .*--replace/);
    expect(manifest()).toBe(after);

    for (const bad of ['mini', 'mini:word2vec:x', 'Mini:hashing:64', 'mini:hashing:four']) {
      const r = await cli(['embed', out, '--encoder', bad]);
      expect(r.code, bad).toBe(2);
      expect(oneLine(r), bad).toHaveLength(1);
      expect(r.stderr, bad).toMatch(/^panta: --encoder: .*fix: /);
    }
    const missing = await cli(['embed', join(dir, 'nowhere'), '--encoder', 'mini:hashing:64']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nowhere: no such folder/);

    const noBackend = await cli(['judge', out, '--judge', '{kind: llm}']);
    expect(noBackend.code).toBe(2);
    expect(oneLine(noBackend)).toHaveLength(1);
    expect(noBackend.stderr).toMatch(/^panta: --judge: backend/);

    // A spec file's judge (the reference judge, the spec's default) under a name of its own.
    const judged = await cli(['judge', out, '--judge', spec, '--name', 'second']);
    expect(judged.code).toBe(0);
    expect(judged.stdout).toMatch(/complete: tag_second \(reference judge\)/);
    const [row] = await queryRows(
      `SELECT count(*) FILTER (WHERE tag_second IS DISTINCT FROM tag)::INTEGER AS differ FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(row).toEqual({ differ: 0 });
    expect((await cli(['verify', out])).code).toBe(0);
    const taken = await cli(['judge', out, '--judge', '{kind: reference}', '--name', 'second']);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(/judge named second already/);

    // An encoder added after a judge: the judge's tables get its rows too (verify recounts them).
    expect((await cli(['embed', out, '--encoder', 'late:hashing:16'])).code).toBe(0);
    const [late] = await queryRows(
      `SELECT count(*)::INTEGER AS n FROM read_parquet('${join(out, 'judges', 'second', 'order_params.parquet')}') WHERE encoder = 'late'`,
    );
    expect(late).toEqual({ n: 2 * 3 });
    expect((await cli(['verify', out])).code).toBe(0);

    const logged = readFileSync(join(out, 'log.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('post-hoc pass'))
      .map((l) => JSON.parse(l) as { msg: string; pass: string; name: string });
    expect(logged.filter((l) => l.msg === 'post-hoc pass finished')).toHaveLength(3);
    expect(logged.filter((l) => l.msg === 'post-hoc pass started').map((l) => `${l.pass} ${l.name}`)).toEqual([
      'embed mini',
      'judge second',
      'embed late',
    ]);

    // Running the sweep again would measure it without what the passes added: refused, nothing changed.
    const passed = manifest();
    const rerun = await cli(['run', spec, '--out', out]);
    expect(rerun.code).toBe(2);
    expect(oneLine(rerun)).toHaveLength(1);
    expect(rerun.stderr).toMatch(/holds what panta embed mini, panta judge second, panta embed late added; fix: nothing is left to run/);
    expect(manifest()).toBe(passed);
  }, 180_000);
});
