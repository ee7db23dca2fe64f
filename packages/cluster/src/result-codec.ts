import { endianness } from 'node:os';
import type { ControlState, EventPlan } from '@panta/core';
import type { EventOutcome } from '@panta/engine';

/**
 * A stored result opens with a readable tag naming its format, so that a worker and a collector of
 * different formats fail on the first result in one line instead of misreading it (a collector from before
 * this format fails in JSON.parse, whose message quotes the tag). Format 1 was JSON with base64 embeddings,
 * format 2 a JSON header with raw float32 embeddings.
 */
const TAG = 'panta-result-';
export const RESULT_FORMAT = 3;
const MAGIC = Buffer.from(`${TAG}${RESULT_FORMAT}\n`, 'latin1');
const littleEndian = endianness() === 'LE';

/** A result in Redis in a format this process does not read (a worker and a collector of different versions). */
export class ResultFormatError extends Error {
  constructor(found: string) {
    super(
      `a committed result in Redis is in ${found}, but this Panta reads format ${RESULT_FORMAT}: run the workers and the collector from the same Panta version`,
    );
    this.name = 'ResultFormatError';
  }
}

/** The outcome's fields every event has, stored in fixed places; the rest (ssvp, teams, boards) go as JSON. */
type Fixed = 'runId' | 'event' | 'response' | 'finishReason' | 'promptTokens' | 'completionTokens' | 'latencyMs' | 'calls' | 'createdAt';
type Extra = Omit<EventOutcome, Exclude<Fixed, 'runId' | 'response' | 'finishReason'> | 'embeddings'>;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A result as stored in Redis for the collector, every number little-endian: the tag; the plan (event, sweep,
 * agent, seed as float64, exact for every safe integer); the outcome's numbers (prompt and completion tokens,
 * latency, calls, createdAt, event as float64); its strings (run id, response, finish reason: u32 byte length,
 * UTF-8); the outcome's other fields as JSON (u32 length, 0 when there are none, as for most events); the
 * plan's neighbours and read versions (u32 count, int32 each); the embeddings (u32 count, then per embedding
 * its name (u16 length, UTF-8) and dimension (u32), then its float32 values). No field is parsed as text but
 * the strings themselves: the JSON header of format 2 cost the collector more than any other step of an
 * event (bench/NOTES.md: results without JSON).
 */
export function encodeResult(plan: EventPlan, outcome: EventOutcome): Buffer {
  const { runId, event, response, finishReason, promptTokens, completionTokens, latencyMs, calls, createdAt, embeddings, ...rest } =
    outcome;
  // A string with a lone surrogate (a server's JSON may escape one) has no UTF-8 form: it goes with the JSON
  // fields, which escape it, so that the collector judges and writes exactly what the worker had.
  const extra: Partial<EventOutcome> = rest;
  const text = (key: 'runId' | 'response' | 'finishReason', value: string): string => {
    if (!LONE_SURROGATE.test(value)) return value;
    extra[key] = value;
    return '';
  };
  const strings = [text('runId', runId), text('response', response), text('finishReason', finishReason)];
  const extraJson = hasAny(extra) ? JSON.stringify(extra) : '';
  strings.push(extraJson);
  const names = Object.keys(embeddings);
  let size = MAGIC.length + 8 * 10 + 4 * strings.length + 4 + 4 * plan.neighbours.length + 4 + 4 * plan.readVersions.length + 4;
  for (const text of strings) size += Buffer.byteLength(text, 'utf8');
  for (const name of names) size += 2 + Buffer.byteLength(name, 'utf8') + 4 + 4 * embeddings[name].length;
  const out = Buffer.allocUnsafe(size);
  let at = MAGIC.copy(out, 0);
  for (const n of [plan.event, plan.sweep, plan.agent, plan.seed, event, promptTokens, completionTokens, latencyMs, calls, createdAt])
    at = out.writeDoubleLE(n, at);
  for (const text of strings) {
    const length = out.write(text, at + 4, 'utf8');
    out.writeUInt32LE(length, at);
    at += 4 + length;
  }
  at = writeInts(out, at, plan.neighbours);
  at = writeInts(out, at, plan.readVersions);
  at = out.writeUInt32LE(names.length, at);
  for (const name of names) {
    const v = embeddings[name];
    const length = out.write(name, at + 2, 'utf8');
    out.writeUInt16LE(length, at);
    at = out.writeUInt32LE(v.length, at + 2 + length);
    at = copyWords(v, out, at);
  }
  if (at !== size) throw new Error(`encodeResult: wrote ${at} bytes of ${size}`);
  return out;
}

/**
 * The words (4-byte values) of the typed arrays a decode allocates, carved out of one buffer sized exactly
 * for the results decoded together (decodeResults). A typed array of more than 64 bytes otherwise has a
 * backing store of its own outside V8's heap, which cost more to allocate (about 2.5 us for 384 floats)
 * than the rest of a result's decoding, and which V8 tracks and frees one by one. The small ones (an
 * event's neighbours and read versions) are carved too: on V8's heap each came with an ArrayBuffer object
 * of its own, and a collector holds every row's until the rows are written, which its garbage collector
 * walked again at every collection (bench/NOTES.md: fewer objects per collected row).
 */
class WordArena {
  private used = 0;
  /** The arena's bytes, for copying the stored words in (one view for all of them). */
  readonly bytes: Uint8Array;

  constructor(readonly buffer: ArrayBuffer) {
    this.bytes = new Uint8Array(buffer);
  }

  /** Where `length` words start in the arena, or -1 when they do not fit (a result decodeResults did not count). */
  carve(length: number): number {
    if (length === 0 || this.used + 4 * length > this.buffer.byteLength) return -1;
    const at = this.used;
    this.used += 4 * length;
    return at;
  }
}

/**
 * Decodes results read together (one read of one run's results, whose rows are written together): their
 * typed arrays share one buffer, which stays alive while any of them does. A result this process cannot
 * read throws as decodeResult does.
 */
export function decodeResults(stored: readonly Buffer[]): { plan: EventPlan; outcome: EventOutcome }[] {
  let words = 0;
  for (const b of stored) words += carvedWords(b);
  // Uninitialised memory: every word is written by the decode before anything reads it.
  const arena = words > 0 ? new WordArena(Buffer.allocUnsafeSlow(4 * words).buffer) : undefined;
  return stored.map((b) => decodeResult(b, arena));
}

/** The words a decode of `stored` carves from an arena (0 for a result it will refuse: the decode says why). */
function carvedWords(b: Buffer): number {
  if (b.length < MAGIC.length || b.compare(MAGIC, 0, MAGIC.length, 0, MAGIC.length) !== 0) return 0;
  let at = MAGIC.length + 80;
  let words = 0;
  // Lengths as decodeResult reads them; any that runs past the end makes the result one it refuses.
  const u32 = (): number => {
    if (at + 4 > b.length) throw new RangeError();
    const v = b.readUInt32LE(at);
    at += 4;
    return v;
  };
  const skip = (bytes: number): void => {
    at += bytes;
    if (at > b.length) throw new RangeError();
  };
  try {
    for (let i = 0; i < 4; i++) skip(u32());
    for (let i = 0; i < 2; i++) {
      const n = u32();
      words += n;
      skip(4 * n);
    }
    for (let count = u32(); count > 0; count--) {
      if (at + 2 > b.length) return 0;
      skip(2 + b.readUInt16LE(at));
      const dim = u32();
      words += dim;
      skip(4 * dim);
    }
  } catch {
    return 0;
  }
  return at === b.length ? words : 0;
}

/** Decodes a stored result; its typed arrays have buffers of their own, or come from `arena` (decodeResults). */
export function decodeResult(stored: Buffer, arena?: WordArena): { plan: EventPlan; outcome: EventOutcome } {
  if (stored.length < MAGIC.length || stored.compare(MAGIC, 0, MAGIC.length, 0, MAGIC.length) !== 0)
    throw new ResultFormatError(formatOf(stored));
  const r = new Reader(stored, MAGIC.length, arena);
  const planEvent = r.double('plan');
  const sweep = r.double('plan');
  const agent = r.double('plan');
  const seed = r.double('plan');
  const event = r.double('outcome');
  const promptTokens = r.double('outcome');
  const completionTokens = r.double('outcome');
  const latencyMs = r.double('outcome');
  const calls = r.double('outcome');
  const createdAt = r.double('outcome');
  const runId = r.text('run id');
  const response = r.text('response');
  const finishReason = shared(r.text('finish reason'));
  const extraJson = r.text('outcome fields');
  const neighbours = r.ints('neighbours');
  const readVersions = r.ints('read versions');
  const embeddings: Record<string, Float32Array> = {};
  for (let count = r.u32('embeddings'); count > 0; count--) {
    const name = r.name();
    embeddings[name] = r.floats(name);
  }
  if (r.at !== stored.length) throw new ResultFormatError(`format ${RESULT_FORMAT} with ${stored.length - r.at} bytes past its end`);
  const extra = extraJson === '' ? {} : (JSON.parse(extraJson) as Extra);
  return {
    plan: { event: planEvent, sweep, agent, seed, neighbours, readVersions },
    // The JSON fields last: a string with a lone surrogate goes there, its fixed place left empty.
    outcome: { runId, event, response, finishReason, promptTokens, completionTokens, latencyMs, calls, createdAt, ...extra, embeddings },
  };
}

/**
 * One string per distinct finish reason ('stop', 'length', a server's own): a collector holds every row's
 * until the rows are written, and a string each was an object per row for its garbage collector. At most
 * SHARED_MAX are kept, so that a server answering a new reason every time fills nothing.
 */
const sharedTexts = new Map<string, string>();
const SHARED_MAX = 64;

function shared(text: string): string {
  const known = sharedTexts.get(text);
  if (known !== undefined) return known;
  if (sharedTexts.size < SHARED_MAX) sharedTexts.set(text, text);
  return text;
}

function hasAny(o: object): boolean {
  for (const key in o) if ((o as Record<string, unknown>)[key] !== undefined) return true;
  return false;
}

function writeInts(out: Buffer, at: number, values: Int32Array): number {
  at = out.writeUInt32LE(values.length, at);
  return copyWords(values, out, at);
}

/** A typed array's 4-byte words into `out` at `at`, little-endian; returns the offset after them. */
function copyWords(values: Int32Array | Float32Array, out: Buffer, at: number): number {
  const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  out.set(bytes, at);
  if (!littleEndian) out.subarray(at, at + bytes.length).swap32();
  return at + bytes.length;
}

/**
 * Reads a stored result front to back through one DataView (little-endian whatever the host; no object per
 * field); a read past its end is a ResultFormatError naming the field.
 */
class Reader {
  private readonly view: DataView;

  constructor(
    private readonly b: Buffer,
    public at: number,
    private readonly arena: WordArena | undefined,
  ) {
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  private need(bytes: number, what: string): void {
    if (this.at + bytes > this.b.length) throw new ResultFormatError(`format ${RESULT_FORMAT} but cut short (${what})`);
  }

  double(what: string): number {
    this.need(8, what);
    const v = this.view.getFloat64(this.at, true);
    this.at += 8;
    return v;
  }

  u32(what: string): number {
    this.need(4, what);
    const v = this.view.getUint32(this.at, true);
    this.at += 4;
    return v;
  }

  text(what: string): string {
    const length = this.u32(what);
    this.need(length, what);
    const v = length === 0 ? '' : this.b.toString('utf8', this.at, this.at + length);
    this.at += length;
    return v;
  }

  name(): string {
    this.need(2, 'embedding name');
    const length = this.view.getUint16(this.at, true);
    this.at += 2;
    this.need(length, 'embedding name');
    const v = this.b.toString('utf8', this.at, this.at + length);
    this.at += length;
    return v;
  }

  ints(what: string): Int32Array {
    return this.words(what, Int32Array);
  }

  /**
   * A copy, into its own buffer or the arena's: the stored bytes need not be 4-byte aligned for a view, and
   * a vector must not keep a whole reply alive. Copied as 32-bit words, so that every float's bits pass
   * unchanged (a NaN's payload too).
   */
  floats(name: string): Float32Array {
    return this.words(`embedding ${name}`, Float32Array);
  }

  /** A length, then that many words, into an array of `type` carved from the arena (or its own). */
  private words<T extends Int32Array | Float32Array>(
    what: string,
    type: { new (length: number): T; new (buffer: ArrayBuffer, at: number, length: number): T },
  ): T {
    const length = this.u32(what);
    this.need(4 * length, what);
    const at = this.arena ? this.arena.carve(length) : -1;
    const v = at >= 0 ? new type(this.arena!.buffer, at, length) : new type(length);
    this.readWords(v, at);
    return v;
  }

  /**
   * The stored words into `v` (carved at `at` of the arena, or -1): a carved array's bytes in one copy
   * (stored little-endian, as this host is), else word by word (a result decoded alone, or a big-endian host).
   */
  private readWords(v: Int32Array | Float32Array, at: number): void {
    const bytes = 4 * v.length;
    if (littleEndian && at >= 0) this.arena!.bytes.set(this.b.subarray(this.at, this.at + bytes), at);
    else {
      const { view } = this;
      const words = v instanceof Int32Array ? v : new Int32Array(v.buffer, v.byteOffset, v.length);
      for (let i = 0, from = this.at; i < words.length; i++, from += 4) words[i] = view.getInt32(from, true);
    }
    this.at += bytes;
  }
}

/** Names the format of a stored result this process cannot read. */
function formatOf(stored: Buffer): string {
  if (stored[0] === 0x7b) return 'format 1 (JSON with base64 embeddings, from a Panta before binary results)';
  if (stored.subarray(0, TAG.length + 2).equals(Buffer.from(`${TAG}2\n`, 'latin1')))
    return 'format 2 (a JSON header, from a Panta before binary headers)';
  const head = stored.toString('latin1', 0, Math.min(stored.length, 24));
  const m = new RegExp(`^${TAG}(\\d+)\n`).exec(head);
  return m ? `format ${m[1]}` : 'no format Panta knows';
}

/** What a job carries for each of its events: the event's plan, so workers need no schedule. */
export interface EventJob {
  run: string;
  event: number;
  sweepIndex: number;
  agent: number;
  seed: number;
  neighbours: number[];
  readVersions: number[];
  /** drift-policy: the moderator message of the event's sweep. */
  moderator?: string;
  /** The event's depth when dispatched (EventTask.depth): admission and vLLM's priority. */
  depth?: number;
  /**
   * A continuation's (offer-continuations-n): the chains' weight each live worker would hold were the sweep's
   * chains spread evenly when it was offered (BullTransport's chains: each running chain weighs its events'
   * reads + 1, about its prompt's size). A worker that would still hold that much without this chain passes
   * it on as a job instead of running it (worker.ts, passOn).
   */
  share?: number;
}

/** The weight of a chain whose events are like this one: its reads + 1, about its prompt's size in answers. */
export function chainWeight(job: { readVersions: ArrayLike<number> }): number {
  return job.readVersions.length + 1;
}

/**
 * BullMQ's job priorities: 1 is taken first, PRIORITY_LAST last (BullMQ's largest); equal ones in the order
 * they were added. Every job has one: BullMQ serves jobs without a priority before any with one.
 */
const PRIORITY_LAST = 2 ** 21 - 1;

/**
 * A job's priority from its deepest event's depth (EventTask.depth: the chain of calls still behind it): the
 * deeper, the sooner a worker takes it, as the worker's admission and vLLM's priority order its calls. Depth
 * 0 or none is the last; 1 is kept for boundaries.
 */
export function jobPriority(depth: number | undefined): number {
  return PRIORITY_LAST - Math.min(PRIORITY_LAST - 2, Math.max(0, Math.floor(depth ?? 0)));
}

/**
 * Every event job's BullMQ options, whoever adds it (the scheduler's queue, a worker passing a chain on):
 * gone from Redis once finished, and retried after an infrastructure error (a commit is idempotent).
 */
export const EVENT_JOB_OPTIONS = {
  removeOnComplete: true,
  removeOnFail: true,
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
} as const;

/** A sweep boundary of one run: the snapshot's versions (agent by agent) and the state after the previous boundary. */
export interface BoundaryJob {
  run: string;
  sweepIndex: number;
  versions: number[];
  state?: ControlState;
}

/**
 * A job: several events of one sweep (of any runs), so that BullMQ's own per-job steps (add, move to
 * active, move to finished: a few Lua calls each) are paid once per batch rather than once per event.
 */
export interface BatchJob {
  sweep: string;
  events: EventJob[];
  /** A boundary is sent alone, in a job with no events. */
  boundary?: BoundaryJob;
  /**
   * The scheduler lease's token of the scheduler that sent the job. A worker runs the job only while that
   * scheduler still holds the sweep's lease: a scheduler stopped, killed or replaced leaves jobs in the queue
   * that no one waits for, and one that resumes the sweep sends every unwritten event again itself.
   */
  lease?: string;
}

export function jobOf(runId: string, plan: EventPlan, moderator?: string, depth?: number): EventJob {
  return {
    ...(moderator ? { moderator } : {}),
    ...(depth ? { depth } : {}),
    run: runId,
    event: plan.event,
    sweepIndex: plan.sweep,
    agent: plan.agent,
    seed: plan.seed,
    neighbours: Array.from(plan.neighbours),
    readVersions: Array.from(plan.readVersions),
  };
}

export function planOfJob(job: EventJob): EventPlan {
  return {
    event: job.event,
    sweep: job.sweepIndex,
    agent: job.agent,
    seed: job.seed,
    neighbours: Int32Array.from(job.neighbours),
    readVersions: Int32Array.from(job.readVersions),
  };
}
