import type { ControlState, EventPlan } from '@panta/core';
import type { EventOutcome } from '@panta/engine';

/** A committed event as stored in Redis for the collector: the plan it ran and what the worker got. */
interface StoredResult {
  plan: { event: number; sweep: number; agent: number; seed: number; neighbours: number[]; readVersions: number[] };
  outcome: Omit<EventOutcome, 'embeddings'> & { embeddings: Record<string, string> };
}

/** Embeddings travel as base64 of their float32 bytes: exact, and a third of the size of JSON numbers. */
export function encodeResult(plan: EventPlan, outcome: EventOutcome): string {
  const embeddings: Record<string, string> = {};
  for (const [name, v] of Object.entries(outcome.embeddings)) embeddings[name] = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  const stored: StoredResult = {
    plan: { event: plan.event, sweep: plan.sweep, agent: plan.agent, seed: plan.seed, neighbours: Array.from(plan.neighbours), readVersions: Array.from(plan.readVersions) },
    outcome: { ...outcome, embeddings },
  };
  return JSON.stringify(stored);
}

export function decodeResult(text: string): { plan: EventPlan; outcome: EventOutcome } {
  const stored = JSON.parse(text) as StoredResult;
  const embeddings: Record<string, Float32Array> = {};
  for (const [name, b64] of Object.entries(stored.outcome.embeddings)) {
    const bytes = Buffer.from(b64, 'base64');
    embeddings[name] = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }
  const p = stored.plan;
  return {
    plan: { event: p.event, sweep: p.sweep, agent: p.agent, seed: p.seed, neighbours: Int32Array.from(p.neighbours), readVersions: Int32Array.from(p.readVersions) },
    outcome: { ...stored.outcome, embeddings },
  };
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
