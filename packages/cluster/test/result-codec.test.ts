import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventPlan } from '@panta/core';
import type { EventOutcome } from '@panta/engine';
import { connect, sweepKeys, type PantaRedis } from '../src/index.js';
import { commitEvents } from '../src/redis/scripts.js';
import { SweepStore } from '../src/redis/sweep-store.js';
import { decodeResult, decodeResults, encodeResult, ResultFormatError } from '../src/result-codec.js';
import { tempDir } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';

const plan: EventPlan = {
  event: 7,
  sweep: 1,
  agent: 3,
  seed: 12345,
  neighbours: Int32Array.from([2, 4]),
  readVersions: Int32Array.from([5, 6, 7]),
};

/** Values a text codec would round: subnormals, -0, NaN, infinities, and 384 values no decimal prints short. */
function vector(dim: number, salt: number): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = Math.sin(i * 12.9898 + salt) * 43758.5453;
  v.set([-0, Number.NaN, Number.POSITIVE_INFINITY, 1.4e-45, -3.4028234663852886e38]);
  return v;
}

const outcome: EventOutcome = {
  runId: 'fq117-ring-n8-T0.7-glauber-t0',
  event: 7,
  response: 'héllo, "world"\n',
  finishReason: 'stop',
  promptTokens: 31,
  completionTokens: 9,
  latencyMs: 12.5,
  calls: 2,
  createdAt: 1_700_000_000_000,
  embeddings: { hashing: vector(384, 1), wide: vector(2304, 2) },
  before: [
    {
      role: 'merge',
      seed: 9,
      response: 'm',
      finishReason: 'length',
      promptTokens: 1,
      completionTokens: 2,
      latencyMs: 3,
      calls: 1,
      createdAt: 4,
    },
  ],
  divergence: 0.25,
};

const bits = (v: Float32Array) => Array.from(new Uint32Array(Float32Array.from(v).buffer));

describe('a committed result as stored in Redis', () => {
  it('round-trips exactly: plan, outcome and every embedding bit for bit', () => {
    const back = decodeResult(encodeResult(plan, outcome));
    expect(back.plan).toEqual(plan);
    const { embeddings, ...rest } = back.outcome;
    const { embeddings: want, ...wantRest } = outcome;
    expect(rest).toEqual(wantRest);
    expect(Object.keys(embeddings)).toEqual(['hashing', 'wide']);
    for (const name of Object.keys(want)) {
      expect(bits(embeddings[name]!)).toEqual(bits(want[name]!));
      // Its own buffer, as the worker's was: writers may take the whole ArrayBuffer.
      expect(embeddings[name]!.buffer.byteLength).toBe(4 * want[name]!.length);
    }
  });

  it('holds each embedding as its raw float32 bytes: 1,536 bytes for 384 dimensions, not base64', () => {
    const one = { ...outcome, embeddings: { hashing: vector(384, 1) } };
    const none = { ...outcome, embeddings: {} };
    const delta = encodeResult(plan, one).length - encodeResult(plan, none).length;
    // The vector's bytes plus its entry in the header (name and length).
    expect(delta).toBeGreaterThanOrEqual(1536);
    expect(delta).toBeLessThan(1536 + 20);
  });

  it("keeps fields it has no fixed place for (a team's role and agent, a board) and a plain event's none", () => {
    const team: EventOutcome = {
      ...outcome,
      before: undefined,
      divergence: undefined,
      role: 'aggregator',
      agent: 2,
      temperature: 0.3,
      board: '[]',
      version: 'b',
    };
    const back = decodeResult(encodeResult(plan, team)).outcome;
    expect(back).toMatchObject({ role: 'aggregator', agent: 2, temperature: 0.3, board: '[]', version: 'b' });
    expect('before' in back).toBe(false);
    const { before: _b, divergence: _d, ...plain } = outcome;
    expect(Object.keys(decodeResult(encodeResult(plan, plain)).outcome).sort()).toEqual(Object.keys(plain).sort());
  });

  it('decodes results read together into one shared buffer, each array its own words', () => {
    const made = Array.from({ length: 12 }, (_, i) => {
      const o = { ...outcome, event: i, embeddings: { hashing: vector(384, i), wide: vector(2304, i) } };
      const p = { ...plan, event: i, neighbours: Int32Array.from({ length: 40 }, (_, k) => k + i) };
      return { p, o, stored: encodeResult(p, o) };
    });
    const back = decodeResults(made.map((m) => m.stored));
    const buffer = back[0]!.outcome.embeddings.hashing!.buffer;
    // Exactly the words of every array, the small ones too: 12 x (40 neighbours, the read versions, 384 + 2,304 floats).
    expect(plan.readVersions.length).toBeGreaterThan(0);
    expect(buffer.byteLength).toBe(4 * 12 * (40 + plan.readVersions.length + 384 + 2304));
    for (const [i, { p, o }] of made.entries()) {
      const b = back[i]!;
      expect(b.outcome.embeddings.wide!.buffer).toBe(buffer);
      expect(b.plan.neighbours.buffer).toBe(buffer);
      expect(b.plan.readVersions.buffer).toBe(buffer);
      expect(bits(b.outcome.embeddings.hashing!)).toEqual(bits(o.embeddings.hashing));
      expect(bits(b.outcome.embeddings.wide!)).toEqual(bits(o.embeddings.wide));
      expect(b.plan).toEqual(p);
    }
    // Writing one array leaves its neighbours in the buffer untouched.
    back[3]!.outcome.embeddings.hashing!.fill(7);
    expect(bits(back[2]!.outcome.embeddings.wide!)).toEqual(bits(made[2]!.o.embeddings.wide));
    expect(bits(back[3]!.outcome.embeddings.wide!)).toEqual(bits(made[3]!.o.embeddings.wide));
    expect(bits(back[4]!.outcome.embeddings.hashing!)).toEqual(bits(made[4]!.o.embeddings.hashing));
    // A damaged result among them is refused as alone, and claims no space of the others.
    const cut = made[0]!.stored.subarray(0, 200);
    expect(() => decodeResults([made[1]!.stored, cut])).toThrow(/cut short/);
    // One whose lengths claim more than it holds is refused before anything is allocated for it.
    const lying = Buffer.from(made[0]!.stored);
    lying.writeUInt32LE(0xffffffff, lying.length - 4 * 2304 - 4);
    expect(() => decodeResults([lying])).toThrow(/cut short \(embedding wide\)/);
  });

  it('gives back each finish reason exactly, however many distinct ones a server invents', () => {
    const reasons = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? 'stop' : `reason-${i}-${'x'.repeat(i)}`));
    const back = decodeResults(reasons.map((finishReason, event) => encodeResult(plan, { ...outcome, event, finishReason })));
    expect(back.map((b) => b.outcome.finishReason)).toEqual(reasons);
  });

  it('keeps strings that have no UTF-8 form (a lone surrogate a server escaped) exactly', () => {
    const odd = { ...outcome, response: 'a\ud800b \udfff', finishReason: '\udc00' };
    const back = decodeResult(encodeResult(plan, odd)).outcome;
    expect(back.response).toBe(odd.response);
    expect(back.finishReason).toBe(odd.finishReason);
    expect(back.runId).toBe(odd.runId);
    // A surrogate pair is well-formed and takes the fixed place.
    const pair = { ...outcome, before: undefined, divergence: undefined, response: 'emoji \ud83d\ude00' };
    const stored = encodeResult(plan, pair);
    expect(decodeResult(stored).outcome.response).toBe(pair.response);
    expect(stored.includes(Buffer.from('emoji \u{1f600}', 'utf8'))).toBe(true);
  });

  it('keeps a NaN payload and every other float bit pattern exactly', () => {
    const words = Uint32Array.from([0x7fa00001, 0xffc12345, 0x00000001, 0x80000000, 0x7f7fffff, 0xdeadbeef]);
    const odd = new Float32Array(words.buffer);
    const back = decodeResult(encodeResult(plan, { ...outcome, embeddings: { odd } })).outcome.embeddings.odd!;
    expect(Array.from(new Uint32Array(back.buffer, back.byteOffset, back.length))).toEqual(Array.from(words));
  });

  it('decodes a vector that sits at an odd offset of a larger buffer (as Redis replies arrive)', () => {
    const stored = encodeResult(plan, outcome);
    const shifted = Buffer.alloc(stored.length + 1);
    stored.copy(shifted, 1);
    expect(bits(decodeResult(shifted.subarray(1)).outcome.embeddings.hashing!)).toEqual(bits(outcome.embeddings.hashing!));
  });

  it('refuses a result of another format in one line naming it and the fix', () => {
    const v1 = Buffer.from(
      JSON.stringify({
        plan: { ...plan, neighbours: [2, 4], readVersions: [5, 6, 7] },
        outcome: { ...outcome, embeddings: { hashing: 'AAAA' } },
      }),
    );
    expect(() => decodeResult(v1)).toThrow(ResultFormatError);
    expect(() => decodeResult(v1)).toThrow(
      /format 1 .*this Panta reads format 3: run the workers and the collector from the same Panta version$/,
    );
    // Format 2: the JSON header of the Panta before this one.
    const header = Buffer.from(JSON.stringify({ plan: { event: 7 }, outcome: {}, embeddings: [] }));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.length);
    const v2 = Buffer.concat([Buffer.from('panta-result-2\n'), length, header]);
    expect(() => decodeResult(v2)).toThrow(
      /is in format 2 \(a JSON header, from a Panta before binary headers\), but this Panta reads format 3/,
    );
    const v4 = Buffer.concat([Buffer.from('panta-result-4\n'), encodeResult(plan, outcome).subarray(15)]);
    expect(() => decodeResult(v4)).toThrow(/is in format 4, but this Panta reads format 3/);
    expect(() => decodeResult(Buffer.from('garbage'))).toThrow(/no format Panta knows/);
    const cut = encodeResult(plan, outcome);
    expect(() => decodeResult(cut.subarray(0, cut.length - 4))).toThrow(/cut short \(embedding wide\)/);
    expect(() => decodeResult(cut.subarray(0, 40))).toThrow(/cut short \(plan\)/);
    expect(() => decodeResult(cut.subarray(0, 60))).toThrow(/cut short \(outcome\)/);
    const long = Buffer.concat([cut, Buffer.from([0])]);
    expect(() => decodeResult(long)).toThrow(/format 3 with 1 bytes past its end/);
    for (const bad of [v1, v2, v4, cut.subarray(0, cut.length - 4), long]) expect(() => decodeResult(bad)).toThrow(/^[^\n]+$/);
  });
});

describe('a result through Redis', () => {
  let server: RedisServer;
  let redis: PantaRedis;
  beforeAll(async () => {
    server = await RedisServer.start(tempDir('panta-result-codec-'));
    redis = connect(server.url, 'test');
  });
  afterAll(async () => {
    await redis.quit();
    await server.stop();
  });

  it('passes through the commit script and back to the collector byte for byte', async () => {
    const keys = sweepKeys('codec-0123456789ab');
    const stored = encodeResult(plan, outcome);
    expect(
      await commitEvents(redis, keys, [{ runId: outcome.runId, event: 7, version: 'v', result: stored, calls: 2, tokens: 40 }]),
    ).toEqual(['done']);
    const store = new SweepStore(redis, keys);
    const [got] = await store.results([{ runId: outcome.runId, event: 7 }]);
    expect(got?.equals(stored)).toBe(true);
    const scanned: Buffer[] = [];
    await store.eachResult(outcome.runId, (b) => scanned.push(b));
    expect(scanned.length).toBe(1);
    expect(bits(decodeResult(scanned[0]!).outcome.embeddings.wide!)).toEqual(bits(outcome.embeddings.wide!));
  });
});
