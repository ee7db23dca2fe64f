import type { EventPlan, RunPlan } from '@panta/core';

/** What a transport carries to a worker: one event of one run. */
export interface EventTask {
  run: RunPlan;
  plan: EventPlan;
}

/** What a worker hands back: everything in the event row except what the collector adds (the judge's tag). */
export interface EventOutcome {
  runId: string;
  event: number;
  response: string;
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  calls: number;
  embeddings: Record<string, Float32Array>;
  createdAt: number;
}

/** Messages from a transport to the executor (a discriminated union, as transports grow). */
export type TransportMessage =
  | { type: 'outcome'; task: EventTask; outcome: EventOutcome }
  | { type: 'failed'; task: EventTask; error: Error }
  /** The transport itself broke (e.g. its store is gone for good): the sweep stops with this error. */
  | { type: 'fatal'; error: Error };

/**
 * Moves events to workers and outcomes back. The executor never runs more than `concurrency` events at
 * once and only dispatches events whose read versions exist; a transport only has to deliver. Embedded mode
 * uses InProcessTransport; the cluster implements the same interface on BullMQ.
 */
export interface Transport {
  start(onMessage: (message: TransportMessage) => void): Promise<void>;
  dispatch(task: EventTask): void;
  /** The text of a version is final: workers may read it from now on. */
  publish(runId: string, version: number, text: string): void;
  /** No event will read these versions again. */
  forget(runId: string, versions: readonly number[]): void;
  close(): Promise<void>;
}
