import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '@panta/core';
import { MicroBatcher } from '../src/onnx/batcher.js';
import { OnnxEncoder } from '../src/onnx/encoder.js';
import { checkSignature, inspectModelFolder } from '../src/onnx/model-folder.js';
import { OnnxTokenizer } from '../src/onnx/tokenize.js';
import { createEncoder, openEncoder } from '../src/create.js';
// @ts-expect-error plain-JS fixture without types
import { meanPoolNormalize as refPool, referenceForward } from './fixtures/tiny-encoder-reference.mjs';

const FIXTURE = new URL('./fixtures/tiny-encoder', import.meta.url).pathname;

const SENTENCES = [
  'the cat sat on the mat',
  'a',
  'what is the capital of france',
  'numbers like 12 and 99 are in the vocabulary too',
  'hello world',
  'the quick brown fox jumps over the lazy dog and runs away into the forest',
  'it is',
  'why do birds sing in the morning before the sun is up',
];
const TARGET = 'who wrote the book about the old man and the sea';
const LONG = Array.from({ length: 60 }, (_, i) => `word${i % 10} and more`).join(' ');

function maxDiff(a: Float32Array, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
const norm = (v: Float32Array): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

let enc: OnnxEncoder;
let tok: OnnxTokenizer;
const temps: string[] = [];
function tempCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'panta-onnx-'));
  temps.push(dir);
  const copy = join(dir, 'tiny-encoder');
  cpSync(FIXTURE, copy, { recursive: true });
  return copy;
}

beforeAll(async () => {
  enc = await OnnxEncoder.fromOptions({ name: 'tiny', path: FIXTURE, maxBatch: 256 });
  tok = OnnxTokenizer.load(inspectModelFolder(FIXTURE));
});
afterAll(async () => {
  await enc?.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe('onnx encoder on the tiny fixture', () => {
  it('reads dim from the model and returns unit vectors; model names folder and hash', async () => {
    expect(enc.dim).toBe(32);
    expect(enc.model).toMatch(/^tiny-encoder@sha256:[0-9a-f]{12}$/);
    expect(enc.maxLength).toBe(64);
    const rows = await enc.encode(SENTENCES);
    expect(rows).toHaveLength(SENTENCES.length);
    for (const r of rows) {
      expect(r).toHaveLength(32);
      expect(Math.abs(norm(r) - 1)).toBeLessThan(1e-5);
    }
    expect(maxDiff(rows[0], rows[2])).toBeGreaterThan(1e-3);
  });

  it('matches an independent plain-JS forward pass to 1e-5', async () => {
    const texts = [...SENTENCES, TARGET, LONG];
    const rows = await enc.encode(texts);
    for (let i = 0; i < texts.length; i++) {
      const ids = tok.ids(texts[i]);
      const mask = [ids.map(() => 1)];
      const hidden = referenceForward([ids], mask, [ids.map(() => 0)]);
      const ref = refPool(hidden, mask)[0] as number[];
      expect(maxDiff(rows[i], ref)).toBeLessThan(1e-5);
    }
  });

  it('truncates to model_max_length keeping [SEP], and pads with [PAD]', () => {
    const ids = tok.ids(LONG);
    expect(ids).toHaveLength(64);
    expect(ids[0]).toBe(2);
    expect(ids[63]).toBe(3);
    const a = tok.ids('hello world');
    const c = tok.ids('a');
    expect(c).toHaveLength(3);
    expect(a.length).toBeGreaterThan(3);
    const b = tok.encodeBatch(['hello world', 'a']);
    expect(b.seqLen).toBe(a.length);
    const pad = Array.from({ length: a.length - 3 }, () => 0n);
    expect(Array.from(b.inputIds)).toEqual([...a.map(BigInt), ...c.map(BigInt), ...pad]);
    expect(Array.from(b.attentionMask)).toEqual([...a.map(() => 1n), 1n, 1n, 1n, ...pad]);
    expect(b.tokenTypeIds.every((x) => x === 0n)).toBe(true);
  });

  it('a sentence embeds the same alone and in batches of 1, 8, 32 with other lengths (1e-6)', async () => {
    const [alone] = await enc.encode([TARGET]);
    const others = Array.from(
      { length: 40 },
      (_, i) =>
        SENTENCES[i % SENTENCES.length]
          .split(' ')
          .slice(0, 1 + (i % 9))
          .join(' ') + (i % 5 === 0 ? ` ${LONG}` : ''),
    );
    for (const size of [1, 8, 32]) {
      for (const pos of [0, size - 1, Math.floor(size / 2)]) {
        const batch = others.slice(0, size - 1);
        batch.splice(pos, 0, TARGET);
        const rows = await enc.encode(batch);
        expect(maxDiff(rows[pos], alone!)).toBeLessThan(1e-6);
      }
    }
    // padded far beyond its length (next to a truncated 64-token sentence) via pre-tokenised rows
    const [padded, truncated] = await enc.encodeTokens([tok.ids(TARGET), tok.ids(LONG)]);
    expect(maxDiff(padded!, alone!)).toBeLessThan(1e-6);
    const [truncAlone] = await enc.encode([LONG]);
    expect(maxDiff(truncated!, truncAlone!)).toBeLessThan(1e-6);
    // a text truncated by the tokenizer equals the same first 63 tokens + [SEP] given explicitly
    const longIds = tok.ids(`${LONG} and then some more words at the end`);
    const [explicit] = await enc.encodeTokens([longIds]);
    const [viaText] = await enc.encode([`${LONG} and then some more words at the end`]);
    expect(maxDiff(explicit!, viaText!)).toBeLessThan(1e-6);
  });

  it('micro-batches concurrent encode calls into few worker runs, each caller gets its rows', async () => {
    const small = await OnnxEncoder.fromOptions({ name: 'b', path: FIXTURE, maxBatch: 16, maxWaitMs: 20 });
    try {
      const singles = await Promise.all(SENTENCES.map((s) => small.encode([s])));
      expect(small.batches).toBe(1);
      const together = await enc.encode(SENTENCES);
      singles.forEach(([r], i) => expect(maxDiff(r!, together[i])).toBeLessThan(1e-6));
      const many = await Promise.all(Array.from({ length: 40 }, (_, i) => small.encode([SENTENCES[i % 8], TARGET])));
      expect(small.batches).toBe(1 + 5);
      many.forEach((rows, i) => expect(maxDiff(rows[0], together[i % 8])).toBeLessThan(1e-6));
    } finally {
      await small.close();
    }
  });

  it('keeps the event loop free while embedding 500 sentences (inference runs off the main thread)', async () => {
    const texts = Array.from({ length: 500 }, (_, i) => `${SENTENCES[i % 8]} ${i} ${i % 3 === 0 ? LONG : ''}`);
    // Event-loop utilisation counts only this thread's busy time, so it does not depend on how loaded the
    // machine is: inference on the main thread would keep it near 1 (bench/encoders measures the stalls).
    const before = performance.eventLoopUtilization();
    await Promise.all(texts.map((t) => enc.encode([t])));
    const { utilization } = performance.eventLoopUtilization(before);
    console.log(`main-thread event-loop utilisation while embedding: ${utilization.toFixed(2)}`);
    expect(utilization).toBeLessThan(0.6);
  });

  it('opens from a spec entry with a path relative to the spec file', async () => {
    const specFile = join(FIXTURE, '..', 'sweep.yaml');
    const e = await openEncoder({ name: 'tiny', kind: 'onnx', path: 'tiny-encoder', max_batch: 8, device: 'cpu' }, specFile, 1);
    try {
      expect(e.dim).toBe(32);
      const [a] = await e.encode([TARGET]);
      const [b] = await enc.encode([TARGET]);
      expect(maxDiff(a!, b!)).toBeLessThan(1e-6);
    } finally {
      await e.close();
    }
    expect(() => createEncoder({ name: 'tiny', kind: 'onnx', path: 'x', max_batch: 8, device: 'cpu' }, specFile, 1)).toThrow(/openEncoder/);
    expect((await openEncoder({ name: 'h', kind: 'hashing', dim: 64 }, specFile, 0)).dim).toBe(64);
  });
});

describe('broken model folders', () => {
  async function openErr(dir: string, device: 'cpu' | 'cuda' = 'cpu'): Promise<InputError> {
    const e = await openEncoder({ name: 'x', kind: 'onnx', path: dir, max_batch: 8, device }, '/spec/sweep.yaml', 2).then(
      async (enc) => {
        await enc.close();
        return undefined;
      },
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(InputError);
    const err = e as InputError;
    expect(err.message.split('\n')).toHaveLength(1);
    expect(err.message.startsWith('/spec/sweep.yaml: encoders[2].')).toBe(true);
    return err;
  }

  it('missing tokenizer.json', async () => {
    const dir = tempCopy();
    rmSync(join(dir, 'tokenizer.json'));
    const err = await openErr(dir);
    expect(err.problem).toContain(join(dir, 'tokenizer.json'));
    expect(err.problem).toContain('missing');
  });

  it('missing tokenizer_config.json', async () => {
    const dir = tempCopy();
    rmSync(join(dir, 'tokenizer_config.json'));
    expect((await openErr(dir)).problem).toContain('tokenizer_config.json is missing');
  });

  it('no model file, and onnx/model.onnx is accepted', async () => {
    const dir = tempCopy();
    rmSync(join(dir, 'model.onnx'));
    const err = await openErr(dir);
    expect(err.problem).toContain('no model file');
    expect(err.fix).toContain('optimum-cli export onnx');
    cpSync(join(FIXTURE, 'model.onnx'), join(dir, 'onnx', 'model.onnx'), { recursive: true });
    expect(inspectModelFolder(dir).model).toBe(join(dir, 'onnx', 'model.onnx'));
  });

  it('an invalid model file and an invalid tokenizer.json', async () => {
    const dir = tempCopy();
    writeFileSync(join(dir, 'model.onnx'), 'this is not a protobuf');
    expect((await openErr(dir)).problem).toContain(`${join(dir, 'model.onnx')} is not a loadable ONNX model`);
    const dir2 = tempCopy();
    writeFileSync(join(dir2, 'tokenizer.json'), '{ broken');
    expect((await openErr(dir2)).problem).toContain(`${join(dir2, 'tokenizer.json')} is not valid JSON`);
  });

  it('a folder that does not exist', async () => {
    expect((await openErr('/nonexistent/model-folder')).problem).toContain('does not exist');
  });

  it('device cuda-only without the CUDA provider gives a one-line error', async () => {
    const before = process.env.PANTA_ENCODER_DEVICE;
    process.env.PANTA_ENCODER_DEVICE = 'cuda-only';
    try {
      const err = await openErr(FIXTURE, 'cuda');
      expect(err.field).toBe('encoders[2].device');
      expect(err.problem).toContain('cuda-only was asked for but onnxruntime-node here has no CUDA provider');
      expect(err.fix).toContain('PANTA_ENCODER_DEVICE=cuda');
    } finally {
      if (before === undefined) delete process.env.PANTA_ENCODER_DEVICE;
      else process.env.PANTA_ENCODER_DEVICE = before;
    }
  });

  it('a bad PANTA_ENCODER_DEVICE is a one-line error naming the variable', async () => {
    const err = await OnnxEncoder.fromOptions({ name: 'x', path: FIXTURE, deviceOverride: 'gpu' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toBe(
      `environment: PANTA_ENCODER_DEVICE: "gpu" is not a device; fix: set PANTA_ENCODER_DEVICE to cpu, cuda (GPU, else CPU with a warning) or cuda-only (GPU or stop), or unset it to use the spec's device`,
    );
  });

  it('signature check: wrong output name, wrong dtypes, wrong rank', () => {
    const ids = { name: 'input_ids', isTensor: true, type: 'int64', shape: ['b', 's'] };
    const mask = { name: 'attention_mask', isTensor: true, type: 'int64', shape: ['b', 's'] };
    const out = { name: 'last_hidden_state', isTensor: true, type: 'float32', shape: ['b', 's', 384] };
    expect(checkSignature('m.onnx', [ids, mask], [out])).toEqual({ dim: 384, inputs: ['input_ids', 'attention_mask'] });
    expect(() => checkSignature('m.onnx', [ids, mask], [{ ...out, name: 'sentence_embedding' }])).toThrow(
      /m\.onnx has no output last_hidden_state \(outputs: sentence_embedding\)/,
    );
    expect(() => checkSignature('m.onnx', [{ ...ids, type: 'int32' }, mask], [out])).toThrow(
      /input input_ids has dtype int32, expected int64/,
    );
    expect(() => checkSignature('m.onnx', [ids, mask], [{ ...out, type: 'float16' }])).toThrow(/dtype float16, expected float32/);
    expect(() => checkSignature('m.onnx', [ids, mask], [{ ...out, shape: ['b', 384] }])).toThrow(/rank 2, expected 3/);
    expect(() => checkSignature('m.onnx', [ids], [out])).toThrow(/no input attention_mask/);
    expect(() => checkSignature('m.onnx', [ids, mask], [out], { file: 's.yaml', field: 'encoders[0].path' })).not.toThrow();
    expect(() => checkSignature('m.onnx', [ids], [out], { file: 's.yaml', field: 'encoders[0].path' })).toThrow(
      /^s\.yaml: encoders\[0\]\.path: m\.onnx has no input/,
    );
  });
});

describe('MicroBatcher', () => {
  it('flushes at maxBatch and after maxWaitMs, preserving order per caller', async () => {
    const seen: number[][] = [];
    const b = new MicroBatcher<number, number>(
      async (xs) => {
        seen.push(xs);
        return xs.map((x) => x * 10);
      },
      4,
      5,
    );
    const [r1, r2, r3] = await Promise.all([b.submit([1, 2]), b.submit([3, 4, 5]), b.submit([6])]);
    expect(r1).toEqual([10, 20]);
    expect(r2).toEqual([30, 40, 50]);
    expect(r3).toEqual([60]);
    expect(seen).toEqual([
      [1, 2, 3, 4],
      [5, 6],
    ]);
  });

  it('rejects every caller of a failed batch', async () => {
    const b = new MicroBatcher<number, number>(
      async () => {
        throw new Error('boom');
      },
      8,
      1,
    );
    await expect(Promise.all([b.submit([1]), b.submit([2])])).rejects.toThrow('boom');
  });
});

describe('device cuda on a host without the CUDA provider (this one)', () => {
  const spec = { name: 'tiny', kind: 'onnx' as const, path: FIXTURE, max_batch: 8, device: 'cuda' as const };

  it('a cuda spec opens on CPU with one warning line and embeds as on CPU', async () => {
    const lines: string[] = [];
    const e = await OnnxEncoder.fromOptions({
      name: 'tiny',
      path: FIXTURE,
      device: 'cuda',
      warn: (l) => lines.push(l),
      place: { file: '/s.yaml', field: 'encoders[1].path' },
    });
    try {
      expect(e.provider).toBe('cpu');
      expect(lines).toEqual([
        expect.stringMatching(
          /^panta: warning: encoders\[1\] \(tiny\) asks for device cuda, but onnxruntime-node here has no CUDA provider \(libonnxruntime_providers_cuda\.so is not installed.*\): it embeds on CPU/,
        ),
      ]);
      expect(lines[0]).not.toContain('\n');
      const [a] = await e.encode([TARGET]);
      const [b] = await enc.encode([TARGET]);
      expect(maxDiff(a!, b!)).toBeLessThan(1e-6);
    } finally {
      await e.close();
    }
  });

  it('a CUDA provider that fails to start falls back to CPU (the real onnxruntime error, one line)', async () => {
    const lines: string[] = [];
    const e = await OnnxEncoder.fromOptions({
      name: 'tiny',
      path: FIXTURE,
      device: 'cuda',
      assumeCudaOffered: true,
      warn: (l) => lines.push(l),
    });
    try {
      expect(e.provider).toBe('cpu');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^panta: warning: encoder tiny asks for device cuda, but onnxruntime's CUDA provider does not start here \(.*shared library.*\): it embeds on CPU/,
      );
      expect((await e.encode(['hello world']))[0]).toHaveLength(e.dim);
    } finally {
      await e.close();
    }
  });

  it('PANTA_ENCODER_DEVICE=cpu runs a cuda spec on CPU without a warning; cpu stays cpu under cuda', async () => {
    const lines: string[] = [];
    const e = await OnnxEncoder.fromOptions({
      name: 'tiny',
      path: FIXTURE,
      device: 'cuda',
      deviceOverride: 'cpu',
      warn: (l) => lines.push(l),
    });
    await e.close();
    expect([e.provider, lines]).toEqual(['cpu', []]);
    const said: string[] = [];
    const opened = await openEncoder(spec, '/spec/sweep.yaml', 0, (l) => said.push(l));
    expect((opened as OnnxEncoder).provider).toBe('cpu');
    expect(said).toEqual([expect.stringMatching(/^panta: warning: encoders\[0\] \(tiny\) asks for device cuda, but /)]);
    await opened.close?.();
  });
});
