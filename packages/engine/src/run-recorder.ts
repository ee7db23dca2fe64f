import { hasBoundaries, temperatureAt, type ControlState, type EncoderColumn, type EventRow, type RunPlan, type Tag } from '@panta/core';
import { appendBoundary, EventShardWriter, readBoundaries, type RunTrace } from '@panta/corpus';
import type { Judge } from '@panta/judge';
import { agentPersona } from './execute-call.js';
import type { BoundaryOutcome, BoundaryTask, CallOutcome, CallResult, EventOutcome, EventTask } from './task.js';

/** Where a run's sweep boundaries stand: the last one decided (journalled), and its state. */
export interface RunControlState {
  /** Sweep of the last boundary decided, -1 before the first. */
  sweep: number;
  state?: ControlState;
}

const EMPTY_I32 = new Int32Array(0);
const EMPTY_READS = new Int32Array(0);

/** Identity columns every row of a sweep shares. */
export interface RowMeta {
  backend: string;
  model: string;
}

/** Per-run totals, kept for runs.parquet. */
export interface RunTally {
  calls: number;
  retries: number;
  promptTokens: number;
  completionTokens: number;
}

/**
 * The collector's half of a run (the order-parameter service's intake): it judges outcomes as they arrive,
 * puts them back in event order and appends them to the run's shard. Rows reach the shard strictly in order, so a
 * crash leaves a contiguous prefix of durable parts, which is what a resume continues from.
 */
export class RunRecorder {
  /** Outcomes received but not yet written, each with its verdict on the way (judged as they arrive). */
  private readonly pending = new Map<number, { task: EventTask; outcome: EventOutcome; tag: Tag | Promise<Tag> }>();
  private next: number;
  private chain: Promise<void> = Promise.resolve();
  private draining = false;
  readonly tally: RunTally = { calls: 0, retries: 0, promptTokens: 0, completionTokens: 0 };
  /** Protocol calls of sweep boundaries, keyed by the event they are written before. */
  private readonly boundaryCalls = new Map<number, { sweep: number; calls: CallOutcome[] }>();
  /** The boundaries decided so far (restored from the control journal on resume). */
  readonly control: RunControlState = { sweep: -1 };

  private constructor(
    private readonly run: RunPlan,
    private readonly writer: EventShardWriter,
    private readonly judge: Judge,
    private readonly meta: RowMeta,
    startEvent: number,
    private readonly onWritten: (count: number) => void,
    private readonly out: string,
    private readonly trace: RunTrace | undefined,
  ) {
    this.next = startEvent;
  }

  static async open(options: {
    out: string;
    run: RunPlan;
    encoders: readonly EncoderColumn[];
    judge: Judge;
    meta: RowMeta;
    startEvent: number;
    partRows: number;
    onWritten: (count: number) => void;
    /** Records every answer for the final measurement (a run written from event 0). */
    trace?: RunTrace;
  }): Promise<RunRecorder> {
    const writer = await EventShardWriter.open({
      dir: options.out,
      runId: options.run.runId,
      encoders: [...options.encoders],
      partRows: options.partRows,
      startEvent: options.startEvent,
    });
    const collector = new RunRecorder(
      options.run,
      writer,
      options.judge,
      options.meta,
      options.startEvent,
      options.onWritten,
      options.out,
      options.trace,
    );
    if (hasBoundaries(options.run.protocol, options.run.controls)) {
      for (const record of await readBoundaries<ControlState, CallOutcome>(
        options.out,
        options.run.runId,
        options.startEvent,
        options.run.n,
      )) {
        collector.noteBoundary(record.sweep, record.state, record.calls);
      }
    }
    return collector;
  }

  private noteBoundary(sweep: number, state: ControlState, calls: CallOutcome[]): void {
    this.control.sweep = sweep;
    this.control.state = state;
    const before = (sweep + 1) * this.run.n;
    if (calls.length > 0 && before >= this.next) this.boundaryCalls.set(before, { sweep, calls });
  }

  /**
   * A sweep boundary's outcome: journalled durably before it resolves (the executor releases the next sweep
   * only then), its calls written as rows before the next sweep's first event.
   */
  async acceptBoundary(task: BoundaryTask, outcome: BoundaryOutcome): Promise<void> {
    await appendBoundary(this.out, this.run.runId, { sweep: task.sweep, state: outcome.state, calls: outcome.calls });
    this.noteBoundary(task.sweep, outcome.state, outcome.calls);
  }

  /** The sweep the run stopped after (early stopping), or undefined when it ran every sweep. */
  get stoppedAfter(): number | undefined {
    return this.control.state?.stop ? this.control.sweep : undefined;
  }

  /** Outcomes received but not yet appended. */
  get backlog(): number {
    return this.pending.size;
  }

  /** True when the event is written or waiting to be: a second delivery of it must be dropped. */
  holds(event: number): boolean {
    return event < this.next || this.pending.has(event);
  }

  /** Next event the shard expects. */
  get written(): number {
    return this.next;
  }

  /**
   * Takes an event's outcome and appends every event now in order. With a judge that answers at once and no
   * part to wait for (most events), that happens before it returns, and it returns nothing: no promise and no
   * turn of the microtask queue per event. Otherwise it returns a promise that settles once the rows it could
   * not append yet are appended (or rejects with the write's failure).
   */
  accept(task: EventTask, outcome: EventOutcome): Promise<void> | undefined {
    // Judge now, not when the row's turn to be written comes: an LLM judge then works at the sweep's
    // concurrency instead of one call at a time per run. A judge reports failures as judge_failure tags.
    const { judge } = this;
    const tag = judge.judgeNow ? judge.judgeNow(this.run.prompt, outcome.response) : judge.judge(this.run.prompt, outcome.response);
    if (typeof tag !== 'string') tag.catch(() => undefined);
    this.pending.set(outcome.event, { task, outcome, tag });
    if (this.draining) return this.chain;
    let wait: Promise<unknown> | undefined;
    try {
      wait = this.writeInOrder();
    } catch (error) {
      // Whatever fails while writing fails the run, as a rejection (the caller is not ready for a throw).
      return Promise.reject(error);
    }
    if (!wait) return undefined;
    this.draining = true;
    this.chain = this.chain.then(() => this.drain(wait));
    return this.chain;
  }

  /**
   * Appends the events that are next in order, as long as nothing must be awaited. Returns what must be
   * awaited before going on (the verdict of the next event, or the start of a part it just appended), or
   * undefined when every event in order is appended.
   */
  private writeInOrder(): Promise<unknown> | undefined {
    let count = 0;
    let wait: Promise<unknown> | undefined;
    for (let item = this.pending.get(this.next); item; item = this.pending.get(this.next)) {
      const { tag } = item;
      if (typeof tag !== 'string') {
        wait = tag.then((t) => {
          item.tag = t;
        });
        break;
      }
      this.pending.delete(this.next);
      const appended = this.writer.append(this.toRows(item.task, item.outcome, tag));
      if (this.writer.expectedEvent === this.next) {
        // The writer refused the rows (it rejects with why): the run fails, and this event is not written.
        wait = appended;
        break;
      }
      this.trace?.add(item.task.plan.sweep, item.task.plan.agent, tag, item.outcome.embeddings);
      this.next++;
      count++;
      if (appended) {
        wait = appended;
        break;
      }
    }
    if (count > 0) this.onWritten(count);
    return wait;
  }

  private async drain(wait: Promise<unknown>): Promise<void> {
    try {
      for (let w: Promise<unknown> | undefined = wait; w; w = this.writeInOrder()) await w;
    } finally {
      this.draining = false;
    }
  }

  /** An event's rows: boundary calls due before it, its merge call, its answer. */
  private toRows(task: EventTask, o: EventOutcome, tag: Tag): EventRow | EventRow[] {
    const { run } = this;
    const { plan } = task;
    const temperature = o.temperature ?? temperatureAt(run.temperature, plan.sweep, run.sweeps, run.controls.annealing);
    this.count(o);
    const reads = plan.readVersions;
    const answer = this.row(
      plan.seed,
      plan.event,
      o.role ?? 'agent',
      plan.sweep,
      o.agent ?? plan.agent,
      agentPersona(run, plan.agent)?.id ?? null,
      plan.neighbours,
      reads,
      o,
      temperature,
      tag,
      o.embeddings,
    );
    const boundary = this.boundaryCalls.get(plan.event);
    // Most events are one row: no array for them.
    if (!boundary && !o.before) return answer;
    const rows: EventRow[] = [];
    if (boundary) {
      this.boundaryCalls.delete(plan.event);
      for (const c of boundary.calls) rows.push(this.callRow(c, plan.event, boundary.sweep, -1, EMPTY_I32, EMPTY_READS, run.temperature));
    }
    for (const c of o.before ?? []) rows.push(this.callRow(c, plan.event, plan.sweep, plan.agent, plan.neighbours, reads, temperature));
    rows.push(answer);
    return rows;
  }

  private count(o: CallResult): void {
    this.tally.calls += o.calls;
    // A team's solution is counted, not called: no call, and no retry either.
    this.tally.retries += Math.max(0, o.calls - 1);
    this.tally.promptTokens += o.promptTokens;
    this.tally.completionTokens += o.completionTokens;
  }

  /**
   * One row, built as one object literal: every row then has the same shape, which the writer's column
   * extractors (and the garbage collector) handle far faster than spread-built objects.
   */
  private row(
    seed: number,
    event: number,
    role: EventRow['role'],
    sweep: number,
    agent: number,
    persona: string | null,
    neighbours: Int32Array,
    reads: Int32Array,
    o: CallResult & { board?: string; divergence?: number },
    temperature: number,
    tag: Tag | null,
    embeddings: Record<string, Float32Array> | null,
  ): EventRow {
    const { run } = this;
    return {
      run_id: run.runId,
      config_id: run.configId,
      trial: run.trial,
      prompt_id: run.prompt.id,
      geometry: run.geometryLabel,
      n: run.n,
      k: run.k,
      temperature: run.temperature,
      protocol: run.protocol,
      seed,
      event,
      role,
      sweep,
      agent,
      persona,
      neighbours,
      read_versions: reads,
      response: o.response,
      board: o.board ?? null,
      divergence: o.divergence ?? null,
      finish_reason: o.finishReason,
      reply_status: o.replyStatus ?? 'ok',
      prompt_tokens: o.promptTokens,
      completion_tokens: o.completionTokens,
      latency_ms: o.latencyMs,
      sampling_temperature: temperature,
      backend: this.meta.backend,
      model: this.meta.model,
      tag,
      judge_model: this.judge.model,
      embeddings,
      created_at: o.createdAt,
    };
  }

  /** A protocol call's row: no answer, so no tag and no embedding. */
  private callRow(
    c: CallOutcome,
    event: number,
    sweep: number,
    agent: number,
    neighbours: Int32Array,
    reads: Int32Array,
    temperature: number,
  ): EventRow {
    this.count(c);
    return this.row(c.seed, event, c.role, sweep, agent, null, neighbours, reads, c, c.role === 'judge' ? 0 : temperature, null, null);
  }

  /** Waits for queued rows, then writes what is in order durably (a failed or interrupted run). */
  async flush(): Promise<void> {
    await this.chain;
    await this.writer.flush();
  }

  /** All events written: merge the parts into the run's shard. */
  async finalize(): Promise<void> {
    await this.chain;
    await this.writer.finalize();
  }
}
