import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Tokenizer } from '@huggingface/tokenizers';
import { queryRows } from '@panta/corpus';
import { runSweep } from '../src/index.js';
import { RHEON6, ROOT, pantaAsync as panta, tempDir, writeSpec } from '../../../test/helpers.js';
// The fixture's own forward pass in plain JavaScript, reading the weights out of model.onnx.
// (a plain .mjs test fixture, untyped)
import { meanPoolNormalize, referenceForward } from '../../embed/test/fixtures/tiny-encoder-reference.mjs';

const TINY = join(ROOT, 'packages', 'embed', 'test', 'fixtures', 'tiny-encoder');

const spec = (tiny: string) => `name: two-encoders
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, torus2d]
sizes: [16]
temperatures: [0.4, 1.4]
sweeps: 3
seed: 4
encoders:
  - {name: hashing, kind: hashing, dim: 384}
  - {name: tiny, kind: onnx, path: ${tiny}, max_batch: 16}
`;

describe('several encoders per sweep', () => {
  it('writes one column per encoder, order parameters for each, and the onnx column matches an independent forward pass', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const summary = await runSweep(writeSpec(dir, spec(TINY)), { out, concurrency: 32 });
    expect(summary.status).toBe('complete');
    const [types] = await queryRows(
      `SELECT any_value(typeof(emb_hashing)) AS h, any_value(typeof(emb_tiny)) AS t, min(len(emb_tiny)) AS lo, max(len(emb_tiny)) AS hi FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(types).toEqual({ h: 'FLOAT[]', t: 'FLOAT[]', lo: 32, hi: 32 });
    const params = await queryRows(`SELECT encoder, count(*) AS n FROM '${out}/order_params.parquet' GROUP BY encoder ORDER BY encoder`);
    expect(params).toEqual([
      { encoder: 'hashing', n: 8 * 4 },
      { encoder: 'tiny', n: 8 * 4 },
    ]);
    expect(existsSync(join(out, 'whitening', 'fq117__tiny.parquet'))).toBe(true);
    expect((await panta(['verify', out])).code).toBe(0);

    const tokenizer = new Tokenizer(
      JSON.parse(readFileSync(join(TINY, 'tokenizer.json'), 'utf8')),
      JSON.parse(readFileSync(join(TINY, 'tokenizer_config.json'), 'utf8')),
    );
    const rows = await queryRows(`SELECT DISTINCT response, emb_tiny FROM read_parquet('${out}/events/*.parquet') LIMIT 12`);
    for (const row of rows) {
      const ids: number[] = tokenizer.encode(String(row.response)).ids;
      const hidden = referenceForward([ids], [ids.map(() => 1)]);
      const [expected] = meanPoolNormalize(hidden, [ids.map(() => 1)]) as number[][];
      (row.emb_tiny as number[]).forEach((x, i) => expect(Math.abs(x - expected![i])).toBeLessThan(1e-5));
    }
  });

  it('a broken model folder is one line naming what is missing, exit 2, nothing written', async () => {
    const dir = tempDir();
    const broken = join(dir, 'broken-model');
    cpSync(TINY, broken, { recursive: true });
    rmSync(join(broken, 'tokenizer.json'));
    const out = join(dir, 'out');
    const r = await panta(['run', writeSpec(dir, spec(broken)), '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/encoders\[1\].*tokenizer\.json/);
    expect(existsSync(out)).toBe(false);
  });

  it('a model with the wrong output name or input dtype (the fixture patched byte for byte) is refused in one line, exit 2', async () => {
    const dir = tempDir();
    const bytes = readFileSync(join(TINY, 'model.onnx'));
    // Same-length renames keep the protobuf valid: the output is no longer last_hidden_state.
    const renamed = join(dir, 'renamed');
    cpSync(TINY, renamed, { recursive: true });
    writeFileSync(
      join(renamed, 'model.onnx'),
      Buffer.from(bytes.toString('latin1').replaceAll('last_hidden_state', 'last_hidden_stat3'), 'latin1'),
    );
    // input_ids declared int32 (TensorProto elem_type 6) instead of int64 (7): still a loadable model.
    const int32 = join(dir, 'int32');
    cpSync(TINY, int32, { recursive: true });
    const patched = Buffer.from(bytes);
    let at = -1;
    for (let i = patched.indexOf('input_ids'); i >= 0; i = patched.indexOf('input_ids', i + 1)) {
      const j = patched.indexOf(Buffer.from([0x08, 0x07]), i);
      if (j > i && j - i < 16) at = j;
    }
    expect(at).toBeGreaterThan(0);
    patched[at + 1] = 0x06;
    writeFileSync(join(int32, 'model.onnx'), patched);
    const a = await panta(['models', 'check', renamed]);
    expect(a.code).toBe(2);
    expect(a.stderr.trim()).toMatch(/model\.onnx has no output last_hidden_state \(outputs: last_hidden_stat3\); fix: /);
    const b = await panta(['run', writeSpec(dir, spec(int32)), '--out', join(dir, 'out')]);
    expect(b.code).toBe(2);
    expect(b.stderr.trim()).toMatch(/input input_ids has dtype int32, expected int64; fix: /);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });
});
