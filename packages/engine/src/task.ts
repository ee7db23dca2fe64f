import type { ControlState, EventPlan, ReplyStatus, Role, RunPlan, TeamRole } from '@panta/core';

/** What a transport carries to a worker: one event of one run. */
export interface EventTask {
  kind?: 'event';
  run: RunPlan;
  plan: EventPlan;
  /** drift-policy: the moderator message of this event's sweep. */
  moderator?: string;
  /**
   * How long a chain of calls is still behind the event when dispatched: its run's depth left (events yet to
   * dispatch over its width, or its bottom level; see Executor.nextReady). Calls carry it to admission and
   * to vLLM's `priority`. Absent: 0.
   */
  depth?: number;
  /**
   * A continuation (DataflowPlanner.followContinuations): dispatched while the event it follows, its one
   * unwritten read, is in flight; the transport runs it once that event's version is written, after it.
   */
  after?: number;
}

/**
 * A sweep boundary of a run with early stopping or drift-policy: runs once every event of `sweep` is written
 * and before any event of the next. `versions` are the snapshot's versions, agent by agent.
 */
export interface BoundaryTask {
  kind: 'boundary';
  run: RunPlan;
  sweep: number;
  versions: Float64Array;
  /** The state after the previous boundary (undefined before the first). */
  state?: ControlState;
}

export type Task = EventTask | BoundaryTask;

/** What one LLM call gave: the columns every row has, whatever its role. */
export interface CallResult {
  response: string;
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  /** Calls made for this result, retries included. */
  calls: number;
  /** Absent for a reply with text; else why `response` is "" (the `reply_status` column). */
  replyStatus?: Exclude<ReplyStatus, 'ok'>;
  createdAt: number;
}

/** An LLM call that sets no answer (merge, judge, moderator): its own row, with its event's index. */
export interface CallOutcome extends CallResult {
  role: Exclude<Role, 'agent'>;
  seed: number;
  /** ssvp's merge: the CDS of the pair it adjudicates. */
  divergence?: number;
}

export interface BoundaryOutcome {
  runId: string;
  sweep: number;
  state: ControlState;
  /** Judge and moderator calls, in the order made. */
  calls: CallOutcome[];
}

/** What a worker hands back: everything in the event row except what the collector adds (the judge's tag). */
export interface EventOutcome extends CallResult {
  runId: string;
  event: number;
  embeddings: Record<string, Float32Array>;
  /** Calls made before the answer (ssvp's merge), each its own row before the agent's. */
  before?: CallOutcome[];
  /** ssvp: the divergence that gated the event. */
  divergence?: number;
  /** belief-board: the entries this event wrote (JSON array), and the version its readers see. */
  board?: string;
  version?: string;
  /** Team runs (docs/teams.md): the call's role, and where the row says otherwise than the plan its agent (a solution's winner) and temperature. */
  role?: TeamRole;
  agent?: number;
  temperature?: number;
}

/** Messages from a transport to the executor (a discriminated union, as transports grow). */
export type TransportMessage =
  | { type: 'outcome'; task: EventTask; outcome: EventOutcome }
  | { type: 'boundary'; task: BoundaryTask; outcome: BoundaryOutcome }
  | { type: 'failed'; task: Task; error: Error }
  /** The transport itself broke (e.g. its store is gone for good): the sweep stops with this error. */
  | { type: 'fatal'; error: Error };

/**
 * Moves events to workers and outcomes back. The executor never runs more than `concurrency` events at
 * once and only dispatches events whose read versions exist; a transport only has to deliver. Embedded mode
 * uses InProcessTransport; the cluster implements the same interface on BullMQ.
 */
export interface Transport {
  /**
   * The transport takes continuations (EventTask.after): an event whose one unwritten read is an event in
   * flight, dispatched before that event is answered. It answers the continuation after the event it follows,
   * and fails it when that event fails.
   */
  readonly continues?: boolean;
  start(onMessage: (message: TransportMessage) => void): Promise<void>;
  dispatch(task: Task): void;
  /** The text of a version is final: workers may read it from now on. */
  publish(runId: string, version: number, text: string): void;
  /** No event will read these versions again. */
  forget(runId: string, versions: readonly number[]): void;
  close(): Promise<void>;
}
