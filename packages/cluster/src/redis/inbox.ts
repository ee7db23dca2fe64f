import type { ControlState } from '@panta/core';
import type { BoundaryOutcome } from '@panta/engine';

/**
 * The messages the roles send each other over the two inbox streams, one type per `op`. On the wire an
 * entry is the flat list of field/value strings Redis streams hold; the Lua steps (scripts/) write some of
 * them directly, so the field names here are theirs too.
 */

/** One event a worker committed, or found committed before (then with no usage): its LLM usage, for progress. */
export interface DoneItem {
  run: string;
  event: number;
  calls: number;
  tokens: number;
}

/** Events a worker committed in one step (commit-events-n), or found committed before a job ran them. */
export interface EventsDone {
  op: 'done';
  items: DoneItem[];
}

/** A worker could not complete an event after the backend's retries (fail-event-3). */
export interface EventFailed {
  op: 'failed';
  run: string;
  event: number;
  error: string;
}

/** A worker could not complete a sweep boundary (fail-boundary-3); on the wire an op 'failed' with a sweep. */
export interface BoundaryFailed {
  op: 'boundaryFailed';
  run: string;
  sweep: number;
  error: string;
}

/** The collector journalled a boundary: the outcome the scheduler acts on. */
export interface BoundaryJournalled {
  op: 'boundary';
  run: string;
  sweep: number;
  /** The outcome's JSON as committed (the scheduler parses it where it uses it). */
  outcome: string;
}

/** Where a run's sweep boundaries stand, as the collector's journal says. */
export interface Control {
  sweep: number;
  state?: ControlState;
}

/** The collector's answer to `open`: where the run's durable rows end. */
export interface RunOpened {
  op: 'opened';
  run: string;
  next: number;
  finalized: boolean;
  control?: Control;
}

export interface RunClosed {
  op: 'closed';
  run: string;
}

/** Rows appended so far, by run (only runs that advanced). */
export interface RowsWritten {
  op: 'written';
  counts: Record<string, number>;
}

/**
 * A worker's backend for this sweep cannot produce answers (its health breaker tripped: an endpoint refused the
 * key, or too many of its replies were unusable or failed): the scheduler stops the sweep with `error`, one line.
 */
export interface BackendUnhealthy {
  op: 'unhealthy';
  error: string;
  /** Who tripped: a worker (then the scheduler stops the collectors too) or a collector (it stops on its own). */
  role: 'worker' | 'collector';
}

/**
 * Adaptive temperatures: the grids of round `round` the collector computed from the corpus (engine's nextRound),
 * or, when `missing` runs of the rounds before have no shard (a failed run), the grids unchanged.
 */
export interface RoundPlanned {
  op: 'round';
  round: number;
  grids: [string, number[]][];
  missing: number;
}

/** What the scheduler reads: worker commits and failures, and the collector's replies. */
export type SchedulerMessage =
  | EventsDone
  | EventFailed
  | BoundaryFailed
  | BoundaryJournalled
  | RunOpened
  | RunClosed
  | RowsWritten
  | RoundPlanned
  | BackendUnhealthy;

/** Committed events whose results wait in Redis for the collector (commit-events-n). */
export interface ResultsCommitted {
  op: 'done';
  items: { run: string; event: number }[];
}

/** A worker committed a boundary (commit-boundary-3), or the scheduler asks again about one: journal it and answer. */
export interface BoundaryCommitted {
  op: 'boundary';
  run: string;
  sweep: number;
}

export interface OpenRun {
  op: 'open';
  run: string;
}

export interface CloseRun {
  op: 'close';
  run: string;
  status: 'complete' | 'failed' | 'stopped';
  wallMs: number;
  error?: string;
}

export interface FinishSweep {
  op: 'finish';
}

/** A worker's backend cannot produce answers: the collector stops (exit 1) with `error`; a rerun resumes. */
export interface StopSweep {
  op: 'stop';
  error: string;
}

/**
 * The scheduler waits on nothing but this run's rows (every event answered): read the commits now instead of
 * at the paced time (collector-pace.ts), so a run's end costs no pause.
 */
export interface RowsWanted {
  op: 'rows';
  run: string;
}

/**
 * Adaptive temperatures: every run under `grids` (round `round - 1`'s) is closed: compute round `round`'s grids
 * from their shards and answer (RoundPlanned). Idempotent: the grids are a function of the corpus.
 */
export interface PlanRound {
  op: 'round';
  round: number;
  grids: [string, number[]][];
}

/** What the collector reads (through its consumer group). */
export type CollectorMessage = ResultsCommitted | BoundaryCommitted | OpenRun | CloseRun | FinishSweep | RowsWanted | StopSweep | PlanRound;

/** A stream entry with its id (acknowledged by id) and its decoded message. */
export interface Delivered<M> {
  id: string;
  message: M;
}

/** An inbox entry that is not a message this version understands: the stream, entry and field at fault. */
export class InboxEntryError extends Error {
  constructor(
    readonly stream: string,
    readonly entryId: string,
    readonly field: string,
    problem: string,
  ) {
    super(`inbox ${stream}, entry ${entryId}: field '${field}' ${problem}`);
    this.name = 'InboxEntryError';
  }
}

/** The flat field list of a scheduler message, as XADD takes it. */
export function encodeSchedulerMessage(m: SchedulerMessage): string[] {
  switch (m.op) {
    case 'done':
      return ['op', 'done', 'items', JSON.stringify(m.items.map((i) => [i.run, i.event, i.calls, i.tokens]))];
    case 'failed':
      return ['op', 'failed', 'run', m.run, 'event', String(m.event), 'error', m.error];
    case 'boundaryFailed':
      return ['op', 'failed', 'run', m.run, 'sweep', String(m.sweep), 'error', m.error];
    case 'boundary':
      return ['op', 'boundary', 'run', m.run, 'sweep', String(m.sweep), 'outcome', m.outcome];
    case 'opened': {
      const fields = ['op', 'opened', 'run', m.run, 'next', String(m.next), 'finalized', m.finalized ? '1' : '0'];
      if (m.control) fields.push('control', JSON.stringify(m.control));
      return fields;
    }
    case 'closed':
      return ['op', 'closed', 'run', m.run];
    case 'written':
      return ['op', 'written', 'counts', JSON.stringify(m.counts)];
    case 'unhealthy':
      return ['op', 'unhealthy', 'error', m.error, 'role', m.role];
    case 'round':
      return ['op', 'round', 'round', String(m.round), 'grids', JSON.stringify(m.grids), 'missing', String(m.missing)];
  }
}

/** The flat field list of a collector message, as XADD takes it. */
export function encodeCollectorMessage(m: CollectorMessage): string[] {
  switch (m.op) {
    case 'done':
      return ['op', 'done', 'items', JSON.stringify(m.items.map((i) => [i.run, i.event]))];
    case 'boundary':
      return ['op', 'boundary', 'run', m.run, 'sweep', String(m.sweep)];
    case 'open':
      return ['op', 'open', 'run', m.run];
    case 'close': {
      const fields = ['op', 'close', 'run', m.run, 'status', m.status, 'wall_ms', String(m.wallMs)];
      if (m.error !== undefined) fields.push('error', m.error);
      return fields;
    }
    case 'finish':
      return ['op', 'finish'];
    case 'stop':
      return ['op', 'stop', 'error', m.error];
    case 'rows':
      return ['op', 'rows', 'run', m.run];
    case 'round':
      return ['op', 'round', 'round', String(m.round), 'grids', JSON.stringify(m.grids)];
  }
}

/** Reads an entry's fields by name, each check failing with the field it concerns. */
class Fields {
  private readonly values = new Map<string, string>();

  constructor(
    private readonly stream: string,
    private readonly id: string,
    flat: readonly string[],
  ) {
    for (let i = 0; i + 1 < flat.length; i += 2) this.values.set(flat[i], flat[i + 1]);
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  fail(name: string, problem: string): never {
    throw new InboxEntryError(this.stream, this.id, name, problem);
  }

  text(name: string): string {
    const v = this.values.get(name);
    if (v === undefined) this.fail(name, 'is missing');
    return v;
  }

  /** A count or index: a non-negative integer. */
  int(name: string): number {
    const v = this.text(name);
    const n = Number(v);
    if (v === '' || !Number.isSafeInteger(n) || n < 0) this.fail(name, `is '${v}', not a non-negative integer`);
    return n;
  }

  json<T>(name: string): T {
    const v = this.text(name);
    try {
      return JSON.parse(v) as T;
    } catch {
      return this.fail(name, 'is not JSON');
    }
  }

  /**
   * A JSON list of [run, count...] tuples of `width` (what commit-events-n writes): a run id, then
   * non-negative integers.
   */
  tuples(name: string, width: number): [string, ...number[]][] {
    const list = this.json<unknown>(name);
    if (!Array.isArray(list)) this.fail(name, 'is not a JSON list');
    for (const t of list) {
      const ok =
        Array.isArray(t) &&
        t.length === width &&
        typeof t[0] === 'string' &&
        t.slice(1).every((n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0);
      if (!ok) this.fail(name, `holds ${JSON.stringify(t)}, not [run, ${width - 1} non-negative integers]`);
    }
    return list as [string, ...number[]][];
  }

  /** Adaptive grids: a JSON list of [group, [temperature...]]. */
  grids(name: string): [string, number[]][] {
    const list = this.json<unknown>(name);
    const ok =
      Array.isArray(list) &&
      list.every(
        (g) =>
          Array.isArray(g) &&
          g.length === 2 &&
          typeof g[0] === 'string' &&
          Array.isArray(g[1]) &&
          (g[1] as unknown[]).every((t) => typeof t === 'number' && Number.isFinite(t)),
      );
    if (!ok) this.fail(name, 'is not a JSON list of [group, [temperature...]]');
    return list as [string, number[]][];
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T {
    const v = this.text(name);
    if (!(allowed as readonly string[]).includes(v)) this.fail(name, `is '${v}', not one of ${allowed.join(', ')}`);
    return v as T;
  }
}

export function decodeSchedulerMessage(stream: string, id: string, flat: readonly string[]): SchedulerMessage {
  const f = new Fields(stream, id, flat);
  const op = f.oneOf('op', ['done', 'failed', 'boundary', 'opened', 'closed', 'written', 'unhealthy', 'round'] as const);
  switch (op) {
    case 'done':
      return { op, items: f.tuples('items', 4).map(([run, event, calls, tokens]) => ({ run, event, calls, tokens }) as DoneItem) };
    case 'failed':
      return f.has('sweep')
        ? { op: 'boundaryFailed', run: f.text('run'), sweep: f.int('sweep'), error: f.text('error') }
        : { op, run: f.text('run'), event: f.int('event'), error: f.text('error') };
    case 'boundary':
      return { op, run: f.text('run'), sweep: f.int('sweep'), outcome: f.text('outcome') };
    case 'opened': {
      const finalized = f.oneOf('finalized', ['0', '1'] as const) === '1';
      return {
        op,
        run: f.text('run'),
        next: f.int('next'),
        finalized,
        ...(f.has('control') ? { control: f.json<Control>('control') } : {}),
      };
    }
    case 'closed':
      return { op, run: f.text('run') };
    case 'written':
      return { op, counts: f.json<Record<string, number>>('counts') };
    case 'unhealthy':
      return { op, error: f.text('error'), role: f.oneOf('role', ['worker', 'collector'] as const) };
    case 'round':
      return { op, round: f.int('round'), grids: f.grids('grids'), missing: f.int('missing') };
  }
}

export function decodeCollectorMessage(stream: string, id: string, flat: readonly string[]): CollectorMessage {
  const f = new Fields(stream, id, flat);
  const op = f.oneOf('op', ['done', 'boundary', 'open', 'close', 'finish', 'rows', 'stop', 'round'] as const);
  switch (op) {
    case 'done':
      return { op, items: f.tuples('items', 2).map(([run, event]) => ({ run, event }) as { run: string; event: number }) };
    case 'boundary':
      return { op, run: f.text('run'), sweep: f.int('sweep') };
    case 'open':
      return { op, run: f.text('run') };
    case 'close':
      return {
        op,
        run: f.text('run'),
        status: f.oneOf('status', ['complete', 'failed', 'stopped'] as const),
        wallMs: Number(f.text('wall_ms')),
        ...(f.has('error') ? { error: f.text('error') } : {}),
      };
    case 'finish':
      return { op };
    case 'rows':
      return { op, run: f.text('run') };
    case 'stop':
      return { op, error: f.text('error') };
    case 'round':
      return { op, round: f.int('round'), grids: f.grids('grids') };
  }
}

/** A journalled boundary's outcome, parsed where the scheduler uses it. */
export function boundaryOutcomeOf(m: BoundaryJournalled): BoundaryOutcome {
  return JSON.parse(m.outcome) as BoundaryOutcome;
}
