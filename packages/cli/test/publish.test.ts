import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { csvLine, parseCsv } from '@panta/core';
import { queryRows } from '@panta/corpus';
import { RHEON6, ROOT, panta, tempDir, writeSpec, pantaInProcess as cli } from '../../../test/helpers.js';

const SPEC = `name: publish
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring]
sizes: [16]
temperatures: [0.2, 1.2]
sweeps: 2
seed: 5
departures: ["ring of 16 only (the paper's grid is larger)", 'two sweeps instead of ten']
`;

// The adversarial tests' keys, read by the backends through api_key_env: publish must keep them out of every file.
const AGENT_VAR = 'SECRETS_TEST_AGENT_CREDENTIAL';
const JUDGE_VAR = 'SECRETS_TEST_JUDGE_CREDENTIAL';
const AGENT_KEY = 'agentKey-9f3c1d7e5b2a4860';
const JUDGE_KEY = 'judgeKey-5d1e0b7a3c9f2468';

let dir: string;
let corpus: string;
let published: string;

/** The adversarial keys, in the environment of the publish that must keep them out. */
const withKeys = { [AGENT_VAR]: AGENT_KEY, [JUDGE_VAR]: JUDGE_KEY };

function files(root: string, at = root): string[] {
  return readdirSync(at, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(root, join(at, e.name)) : [join(at, e.name).slice(root.length + 1)],
  );
}

const header = (out: string) =>
  parse(/^---\n([\s\S]*?)\n---\n/.exec(readFileSync(join(out, 'README.md'), 'utf8'))![1]!) as Record<string, any>;

/** A copy of the published folder to damage. */
function copy(name: string): string {
  const target = join(dir, name);
  cpSync(published, target, { recursive: true });
  return target;
}

beforeAll(async () => {
  dir = tempDir('panta-publish-');
  corpus = join(dir, 'corpus');
  const r = await cli(['run', writeSpec(dir, SPEC), '--out', corpus]);
  expect(r.code).toBe(0);
  // The spec names the variables its backends read their keys from, as a sweep against a keyed server does.
  const manifest = JSON.parse(readFileSync(join(corpus, 'manifest.json'), 'utf8'));
  manifest.spec.backend.api_key_env = AGENT_VAR;
  manifest.spec.judge.api_key_env = JUDGE_VAR;
  writeFileSync(join(corpus, 'manifest.json'), JSON.stringify(manifest));
  published = join(dir, 'published');
  const p = await cli(
    ['publish', corpus, '--out', published, '--licence', 'MIT', '--title', `Rheon ${AGENT_KEY}`, '--authors', `Ada, ${JUDGE_KEY}`],
    withKeys,
  );
  expect(p.stderr).toBe('');
  expect(p.code).toBe(0);
});

describe('panta publish', () => {
  it('writes data/, README.md and croissant.json and nothing private', () => {
    const all = files(published).sort();
    expect(all).toContain('README.md');
    expect(all).toContain('croissant.json');
    for (const f of all) expect(f === 'README.md' || f === 'croissant.json' || /^data\/[a-z_]+\/part-\d+\.parquet$/.test(f), f).toBe(true);
    expect(existsSync(join(corpus, '.state'))).toBe(true);
    expect(existsSync(join(corpus, 'log.jsonl'))).toBe(true);
  });

  it("reads every config through the card's globs with the corpus's own row counts", async () => {
    const h = header(published);
    const own = async (glob: string) => Number((await queryRows(`SELECT count(*) AS n FROM read_parquet('${join(corpus, glob)}')`))[0]!.n);
    const expected: Record<string, number> = {
      events: await own('events/*.parquet'),
      runs: await own('runs.parquet'),
      order_params: await own('order_params.parquet'),
      stats: await own('stats.parquet'),
      phase: await own('phase.parquet'),
      whitening: await own('whitening/*.parquet'),
    };
    const manifest = JSON.parse(readFileSync(join(corpus, 'manifest.json'), 'utf8'));
    expect(expected.events).toBe(manifest.events.written);
    expect(expected.runs).toBe(manifest.runs.planned);
    const configs = h.configs as { config_name: string; data_files: { path: string }[] }[];
    expect(configs.map((c) => c.config_name).sort()).toEqual(Object.keys(expected).sort());
    for (const c of configs) {
      const rows = await queryRows(`SELECT count(*) AS n FROM read_parquet('${join(published, c.data_files[0]!.path)}')`);
      expect(Number(rows[0]!.n), c.config_name).toBe(expected[c.config_name]);
    }
  });

  it("holds the Hub's documented card keys and a body generated from the manifest", () => {
    const h = header(published);
    for (const key of ['license', 'language', 'size_categories', 'task_categories', 'configs', 'pretty_name'])
      expect(h[key], key).toBeDefined();
    expect(h.license).toBe('mit');
    expect(h.size_categories).toEqual(['n<1K']);
    const card = readFileSync(join(published, 'README.md'), 'utf8');
    expect(card).toMatch(/surrogate-potts-v1/);
    expect(card).toMatch(/\| `magnetisation` \| DOUBLE \| magnetisation m/);
    expect(card).toMatch(/\| `emb_hashing` \| FLOAT\[\] \| embedding of the answer by encoder hashing/);
    expect(card).toMatch(/```yaml\nname: publish\n/);
    expect(card).not.toMatch(/undocumented column/);
    // The spec's departures from the paper, each a line of their own section.
    expect(card).toMatch(/## Departures from the paper\n\n- ring of 16 only \(the paper's grid is larger\)\n- two sweeps instead of ten\n/);
    expect(card).not.toContain(ROOT);
  });

  it('holds every required Croissant field with sha256 checksums that match the files', async () => {
    const meta = JSON.parse(readFileSync(join(published, 'croissant.json'), 'utf8'));
    for (const key of ['@context', '@type', 'conformsTo', 'name', 'description', 'license', 'url', 'distribution', 'recordSet'])
      expect(meta[key], key).toBeDefined();
    expect(meta['@type']).toBe('sc:Dataset');
    expect(meta.conformsTo).toBe('http://mlcommons.org/croissant/1.0');
    const objects = meta.distribution.filter((d: any) => d['@type'] === 'cr:FileObject');
    expect(objects.map((d: any) => d.contentUrl).sort()).toEqual(
      files(published)
        .filter((f) => f.startsWith('data/'))
        .sort(),
    );
    const { createHash } = await import('node:crypto');
    for (const d of objects)
      expect(
        createHash('sha256')
          .update(readFileSync(join(published, d.contentUrl)))
          .digest('hex'),
      ).toBe(d.sha256);
    const events = meta.recordSet.find((r: any) => r.name === 'events');
    expect(events.field.find((f: any) => f.name === 'emb_hashing')).toMatchObject({ dataType: 'sc:Float', repeated: true });
    expect(events.field.find((f: any) => f.name === 'event')).toMatchObject({
      dataType: 'sc:Integer',
      source: { fileSet: { '@id': 'events-files' }, extract: { column: 'event' } },
    });
  });

  it("holds no key from the adversarial tests' backends in any file, Parquet read back included", async () => {
    for (const f of files(published)) {
      const raw = readFileSync(join(published, f), 'latin1');
      for (const key of [AGENT_KEY, JUDGE_KEY]) expect(raw.includes(key), `${f}: ${key}`).toBe(false);
      if (f.endsWith('.parquet')) {
        const text = JSON.stringify(await queryRows(`SELECT * FROM read_parquet('${join(published, f)}')`));
        for (const key of [AGENT_KEY, JUDGE_KEY]) expect(text.includes(key), `${f} read back: ${key}`).toBe(false);
      }
    }
    expect(readFileSync(join(published, 'README.md'), 'utf8')).toMatch(/# Rheon \[redacted\]/);
  });

  it('drops the embeddings with --without-embeddings', async () => {
    const out = join(dir, 'light');
    const r = await cli(['publish', corpus, '--out', out, '--without-embeddings']);
    expect(r.code).toBe(0);
    expect(existsSync(join(out, 'data', 'whitening'))).toBe(false);
    const cols = await queryRows(`DESCRIBE SELECT * FROM read_parquet('${join(out, 'data/events/*.parquet')}')`);
    expect(cols.map((c) => c.column_name)).not.toContain('emb_hashing');
    expect(cols.map((c) => c.column_name)).toContain('response');
    expect((await cli(['publish', '--check', out])).code).toBe(0);
  });

  it("gives the judge's agreement with human annotators where panta annotate score ran", async () => {
    const scored = join(dir, 'scored');
    cpSync(corpus, scored, { recursive: true });
    const sample = join(dir, 'sample.csv');
    expect((await cli(['annotate', 'export', scored, '--n', '8', '--seed', '1', '--out', sample])).code).toBe(0);
    const [head, ...rows] = parseCsv(readFileSync(sample, 'utf8'));
    const label = head!.indexOf('label');
    const alice = join(dir, 'alice.csv');
    writeFileSync(
      alice,
      `${[head!, ...rows.map((r, i) => r.map((v, j) => (j === label ? (i % 3 === 0 ? 'hallucinated' : 'correct') : v)))].map(csvLine).join('\n')}\n`,
    );
    expect((await cli(['annotate', 'score', scored, alice])).code).toBe(0);
    const pair = JSON.parse(readFileSync(join(scored, 'annotation.json'), 'utf8')).pairs.find((p: any) => p.scope === 'pooled');
    const out = join(dir, 'scored-published');
    expect((await cli(['publish', scored, '--out', out])).code).toBe(0);
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    expect(card).toContain(
      `${pair.a} vs ${pair.b} on ${pair.n} answers, agreement ${(100 * pair.agreement).toFixed(1)}%, Cohen's kappa ${pair.kappa === null ? 'undefined' : pair.kappa.toFixed(3)}.`,
    );
    expect(files(out).some((f) => f.includes('annotation'))).toBe(false);
  });

  it("puts forward a post-hoc judge's tags with --judge, and refuses a judge the corpus does not have", async () => {
    const judged = join(dir, 'judged');
    cpSync(corpus, judged, { recursive: true });
    expect((await cli(['judge', judged, '--judge', '{kind: reference}', '--name', 'ref2'])).code).toBe(0);
    const bad = await cli(['publish', judged, '--out', join(dir, 'bad-judge'), '--judge', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^panta: .*manifest.json: --judge: no post-hoc judge named nope; fix: use one of ref2/);
    expect(existsSync(join(dir, 'bad-judge'))).toBe(false);
    const out = join(dir, 'judged-published');
    expect((await cli(['publish', judged, '--out', out, '--judge', 'ref2'])).code).toBe(0);
    expect(header(out).configs.map((c: any) => c.config_name)).toEqual(
      expect.arrayContaining(['judges_ref2_order_params', 'judges_ref2_runs']),
    );
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toMatch(/stands on are the post-hoc judge `ref2`'s: column `tag_ref2`/);
    expect((await cli(['publish', '--check', out])).code).toBe(0);
  });

  it('publishes a corpus whose protocol makes extra calls: the events table holds them, events.written counts the events', async () => {
    // The travel experiment's arms write summary and merge calls into the event shards beside the agents' answers.
    const travel = join(dir, 'travel');
    const spec = readFileSync(join(ROOT, 'examples', 'ssvp-travel.yaml'), 'utf8')
      .replace(/^trials: \d+$/m, 'trials: 1')
      .replace(/^dataset: \.\.\//m, `dataset: ${ROOT}/`)
      .replace(/file: travel-roles\.jsonl/, `file: ${join(ROOT, 'examples', 'travel-roles.jsonl')}`);
    expect((await cli(['run', writeSpec(dir, spec, 'travel.yaml'), '--out', travel])).code).toBe(0);
    const out = join(dir, 'travel-published');
    const p = await cli(['publish', travel, '--out', out]);
    expect(p.stderr).toBe('');
    expect(p.code).toBe(0);
    const written = JSON.parse(readFileSync(join(travel, 'manifest.json'), 'utf8')).events.written as number;
    const [row] = await queryRows(`SELECT count(*)::INTEGER AS n FROM read_parquet('${join(out, 'data', 'events', '*.parquet')}')`);
    expect(Number(row!.n)).toBeGreaterThan(written);
  });

  it('refuses an existing non-empty --out in one line, exit 2, touching nothing', async () => {
    const out = join(dir, 'taken');
    mkdirSync(out);
    writeFileSync(join(out, 'keep.txt'), 'x');
    const r = await cli(['publish', corpus, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--out: exists and is not an empty folder/);
    expect(readdirSync(out)).toEqual(['keep.txt']);
    const running = join(dir, 'running');
    cpSync(corpus, running, { recursive: true });
    const m = JSON.parse(readFileSync(join(running, 'manifest.json'), 'utf8'));
    writeFileSync(join(running, 'manifest.json'), JSON.stringify({ ...m, status: 'running' }));
    const unfinished = await cli(['publish', running, '--out', join(dir, 'unfinished')]);
    expect(unfinished.code).toBe(2);
    expect(unfinished.stderr).toMatch(/manifest.json: status: is running, not complete; fix: finish the sweep/);
    expect(existsSync(join(dir, 'unfinished'))).toBe(false);
    const inside = await cli(['publish', corpus, '--out', join(corpus, 'published')]);
    expect(inside.code).toBe(2);
    expect(inside.stderr).toMatch(/--out: is inside the corpus/);
    expect(existsSync(join(corpus, 'published'))).toBe(false);
  });
});

describe('panta publish --check', () => {
  it('passes on a published folder', () => {
    // The binary: its exit status and stdout.
    const r = panta(['publish', '--check', published]);
    expect(r.stdout).toMatch(/^ok: /m);
    expect(r.code).toBe(0);
  });

  it('names a file removed', async () => {
    const out = copy('removed');
    rmSync(join(out, 'data', 'runs', 'part-0.parquet'));
    const r = await cli(['publish', '--check', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/problem: data\/runs\/part-0.parquet: listed in croissant.json but missing/);
  });

  it('names a checksum changed', async () => {
    const out = copy('changed');
    const file = join(out, 'data', 'order_params', 'part-0.parquet');
    await queryRows(`COPY (SELECT * FROM read_parquet('${file}')) TO '${file}.x' (FORMAT parquet, COMPRESSION snappy)`);
    cpSync(`${file}.x`, file);
    rmSync(`${file}.x`);
    const r = await cli(['publish', '--check', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/problem: data\/order_params\/part-0.parquet: sha256 does not match croissant.json/);
  });

  it('names a required field removed', async () => {
    const out = copy('field');
    const meta = JSON.parse(readFileSync(join(out, 'croissant.json'), 'utf8'));
    delete meta.license;
    writeFileSync(join(out, 'croissant.json'), JSON.stringify(meta));
    const r = await cli(['publish', '--check', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/problem: croissant.json: required field license is missing/);
  });

  it('names a card key removed', async () => {
    const out = copy('card');
    writeFileSync(join(out, 'README.md'), readFileSync(join(out, 'README.md'), 'utf8').replace(/^license: .*\n/m, ''));
    const r = await cli(['publish', '--check', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/problem: README.md: the card header has no license/);
  });
});
