import { endianness } from 'node:os';
import type { ControlState, EventPlan } from '@panta/core';
import type { EventOutcome } from '@panta/engine';

/** The plan and outcome of a committed event, as the header of its stored result (embeddings apart). */
interface ResultHeader {
  plan: { event: number; sweep: number; agent: number; seed: number; neighbours: number[]; readVersions: number[] };
  outcome: Omit<EventOutcome, 'embeddings'>;
  /** Each embedding's encoder and length, in the order their float32 bytes follow the header. */
  embeddings: [string, number][];
}

/**
 * A stored result opens with a readable tag naming its format, so that a worker and a collector of
 * different formats fail on the first result in one line instead of misreading it (a collector from before
 * this format fails in JSON.parse, whose message quotes the tag). Format 1 was JSON with base64 embeddings.
 */
const TAG = 'panta-result-';
export const RESULT_FORMAT = 2;
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

/**
 * A result as stored in Redis for the collector: the tag, the header's JSON length (u32 LE), the header, then
 * each embedding's float32 bytes, little-endian. Raw bytes are a quarter smaller than base64 and decode with
 * a copy, no parsing (a 384-dimensional vector is 1,536 bytes).
 */
export function encodeResult(plan: EventPlan, outcome: EventOutcome): Buffer {
  const { embeddings, ...rest } = outcome;
  const vectors = Object.entries(embeddings);
  const header: ResultHeader = {
    plan: {
      event: plan.event,
      sweep: plan.sweep,
      agent: plan.agent,
      seed: plan.seed,
      neighbours: Array.from(plan.neighbours),
      readVersions: Array.from(plan.readVersions),
    },
    outcome: rest,
    embeddings: vectors.map(([name, v]) => [name, v.length]),
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length);
  const parts: Buffer[] = [MAGIC, length, json];
  for (const [, v] of vectors) {
    const bytes = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    parts.push(littleEndian ? bytes : Buffer.from(bytes).swap32());
  }
  return Buffer.concat(parts);
}

export function decodeResult(stored: Buffer): { plan: EventPlan; outcome: EventOutcome } {
  if (stored.length < MAGIC.length + 4 || !stored.subarray(0, MAGIC.length).equals(MAGIC)) throw new ResultFormatError(formatOf(stored));
  const jsonEnd = MAGIC.length + 4 + stored.readUInt32LE(MAGIC.length);
  const header = JSON.parse(stored.toString('utf8', MAGIC.length + 4, jsonEnd)) as ResultHeader;
  const embeddings: Record<string, Float32Array> = {};
  let at = jsonEnd;
  for (const [name, dim] of header.embeddings) {
    if (at + 4 * dim > stored.length) throw new ResultFormatError(`format ${RESULT_FORMAT} but cut short (embedding ${name})`);
    // A copy into the vector's own buffer: the stored bytes need not be 4-byte aligned for a view, and a
    // vector must not keep a whole reply alive.
    const v = new Float32Array(dim);
    const bytes = Buffer.from(v.buffer);
    stored.copy(bytes, 0, at, at + 4 * dim);
    if (!littleEndian) bytes.swap32();
    embeddings[name] = v;
    at += 4 * dim;
  }
  const p = header.plan;
  return {
    plan: {
      event: p.event,
      sweep: p.sweep,
      agent: p.agent,
      seed: p.seed,
      neighbours: Int32Array.from(p.neighbours),
      readVersions: Int32Array.from(p.readVersions),
    },
    outcome: { ...header.outcome, embeddings },
  };
}

/** Names the format of a stored result this process cannot read. */
function formatOf(stored: Buffer): string {
  if (stored[0] === 0x7b) return 'format 1 (JSON with base64 embeddings, from a Panta before binary results)';
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
}

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
  /** A boundary travels alone, in a job with no events. */
  boundary?: BoundaryJob;
}

export function jobOf(runId: string, plan: EventPlan, moderator?: string): EventJob {
  return {
    ...(moderator ? { moderator } : {}),
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
