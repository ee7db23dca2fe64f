import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { manifestDigest } from '@panta/corpus';
import { RHEON6, tempDir, writeSpec, pantaInProcess as cli } from '../../../test/helpers.js';

/**
 * `panta verify` against corpora changed after Panta wrote them: hand edits of the manifest, a stray shard,
 * a flipped byte in a table. One small corpus (two runs) is written once; each case damages a copy of it.
 */
const SPEC = `name: tamper
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [16]
temperatures: [0.2, 1.2]
sweeps: 3
seed: 3
`;

const SHARD = join('events', 'fq117-ring-n16-T0.2-glauber-t0.parquet');

let dir: string;
let corpus: string;
let cases = 0;

/** A copy of the good corpus to damage. */
function copy(): string {
  const target = join(dir, `case-${++cases}`);
  cpSync(corpus, target, { recursive: true });
  return target;
}

type Json = Record<string, any>;

function editManifest(out: string, edit: (m: Json) => void): void {
  const file = join(out, 'manifest.json');
  const m = JSON.parse(readFileSync(file, 'utf8')) as Json;
  edit(m);
  writeFileSync(file, JSON.stringify(m, null, 2));
}

/** Flips every bit of the byte at `offset` (from the end when negative). */
function flipByte(file: string, offset: number): void {
  const bytes = readFileSync(file);
  const at = offset >= 0 ? offset : bytes.length + offset;
  bytes[at] ^= 0xff;
  writeFileSync(file, bytes);
}

/** verify's verdict on a damaged corpus: exit 1, nothing on stderr, and its problem lines. */
async function problems(out: string): Promise<string[]> {
  const r = await cli(['verify', out]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(/^not ok: /m);
  return r.stdout.split('\n').filter((l) => l.startsWith('problem: '));
}

beforeAll(async () => {
  dir = tempDir();
  corpus = join(dir, 'corpus');
  const r = await cli(['run', writeSpec(dir, SPEC), '--out', corpus, '--log-level', 'silent']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/complete: 2\/2 runs, 128 events/);
});

describe('panta verify against a changed corpus', () => {
  it('accepts the corpus as written, and says what it could not check in a manifest without a digest', async () => {
    const r = await cli(['verify', corpus]);
    expect(r.stdout).toMatch(/^ok: .*128 events/);
    expect(r.stdout).not.toMatch(/note:/);
    expect(r.code).toBe(0);
    const old = copy();
    editManifest(old, (m) => delete m.digest);
    const o = await cli(['verify', old]);
    expect(o.code).toBe(0);
    expect(o.stdout).toMatch(/^ok: /);
    expect(o.stdout).toMatch(/^note: manifest\.json has no digest/m);
  });

  it.each([
    ['events.written', (m: Json) => (m.events.written -= 1), /^problem: manifest\.json: events\.written says 127, the shards hold 128$/],
    ['seed', (m: Json) => (m.seed = 4), /^problem: manifest\.json: seed says 4, its spec \(spec\.seed\) says 3$/],
    ['tags', (m: Json) => (m.tags.correct += 1), /^problem: manifest\.json: tags\.correct says \d+, the shards hold \d+$/],
    [
      'usage',
      (m: Json) => (m.usage.prompt_tokens -= 1),
      /^problem: manifest\.json: usage\.prompt_tokens says \d+, runs\.parquet adds up to \d+$/,
    ],
    [
      'gold answers',
      (m: Json) => m.prompts[0].accepted.push('no answer at all'),
      /^problem: manifest\.json: prompts\.fq117\.accepted does not match/,
    ],
    ['judge calls', (m: Json) => (m.usage.judge_calls = 7), /^problem: manifest\.json: usage\.judge_calls does not match/],
    ['an added field', (m: Json) => (m.verified = true), /^problem: manifest\.json: verified was added/],
  ])('names a hand edit of the manifest: %s', async (_name, edit, expected) => {
    const out = copy();
    editManifest(out, edit);
    const lines = await problems(out);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(expected);
  });

  it("names a hand edit of a post-hoc judge's tag counts, recounted from its column", async () => {
    const out = copy();
    const judged = await cli(['judge', out, '--judge', '{kind: reference}', '--name', 'ref']);
    expect(judged.code, judged.stderr).toBe(0);
    expect((await cli(['verify', out])).code).toBe(0);
    editManifest(out, (m) => (m.judges[0].tags.correct += 1));
    expect(await problems(out)).toEqual([
      expect.stringMatching(/^problem: manifest\.json: judges\.ref\.tags\.correct says \d+, the shards' tag_ref holds \d+$/),
    ]);
  });

  it('names a file the manifest does not list: a stray shard in events/, a Parquet file anywhere', async () => {
    const out = copy();
    cpSync(join(out, SHARD), join(out, 'events', 'mine.parquet'));
    cpSync(join(out, 'runs.parquet'), join(out, 'runs-old.parquet'));
    const lines = await problems(out);
    expect(lines).toEqual([
      expect.stringMatching(/^problem: events\/mine\.parquet is not listed in the manifest/),
      expect.stringMatching(/^problem: runs-old\.parquet is not listed in the manifest/),
    ]);
  });

  it.each([['order_params.parquet'], ['runs.parquet'], [SHARD]])('names a damaged %s in one line', async (file) => {
    const out = copy();
    flipByte(join(out, file), 100);
    const lines = await problems(out);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`problem: ${file} does not match its checksum`);
    expect(lines[0]).toMatch(/cannot be read as Parquet/);
  });

  it('cannot tell a forged digest: an edit whose digest is recomputed verifies (integrity, not authenticity)', async () => {
    const out = copy();
    editManifest(out, (m) => {
      m.prompts[0].accepted.push('no answer at all');
      const { digest: _d, ...content } = m;
      m.digest = manifestDigest(content);
    });
    const r = await cli(['verify', out]);
    expect(r.stdout).toMatch(/^ok: /);
    expect(r.code).toBe(0);
  });
});
