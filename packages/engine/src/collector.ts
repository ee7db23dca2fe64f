import type { EncoderColumn, EventRow, RunPlan, Tag } from '@panta/core';
import { EventShardWriter } from '@panta/corpus';
import type { Judge } from '@panta/judge';
import type { EventOutcome, EventTask } from './task.js';

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
export class RunCollector {
  /** Outcomes received but not yet written, each with its verdict on the way (judged as they arrive). */
  private readonly pending = new Map<number, { task: EventTask; outcome: EventOutcome; tag: Promise<Tag> }>();
  private next: number;
  private chain: Promise<void> = Promise.resolve();
  private draining = false;
  readonly tally: RunTally = { calls: 0, retries: 0, promptTokens: 0, completionTokens: 0 };

  private constructor(
    private readonly run: RunPlan,
    private readonly writer: EventShardWriter,
    private readonly judge: Judge,
    private readonly meta: RowMeta,
    startEvent: number,
    private readonly onWritten: (count: number) => void,
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
  }): Promise<RunCollector> {
    const writer = await EventShardWriter.open({
      dir: options.out,
      runId: options.run.runId,
      encoders: [...options.encoders],
      partRows: options.partRows,
      startEvent: options.startEvent,
    });
    return new RunCollector(options.run, writer, options.judge, options.meta, options.startEvent, options.onWritten);
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

  accept(task: EventTask, outcome: EventOutcome): Promise<void> {
    // Judge now, not when the row's turn to be written comes: an LLM judge then works at the sweep's
    // concurrency instead of one call at a time per run. A judge reports failures as judge_failure tags.
    const tag = this.judge.judge(this.run.prompt, outcome.response);
    tag.catch(() => undefined);
    this.pending.set(outcome.event, { task, outcome, tag });
    if (this.draining || !this.pending.has(this.next)) return this.chain;
    this.draining = true;
    this.chain = this.chain.then(() => this.drain());
    return this.chain;
  }

  private async drain(): Promise<void> {
    try {
      let count = 0;
      for (let item = this.pending.get(this.next); item; item = this.pending.get(this.next)) {
        this.pending.delete(this.next);
        await this.writer.append(this.toRow(item.task, item.outcome, await item.tag));
        this.next++;
        count++;
      }
      if (count > 0) this.onWritten(count);
    } finally {
      this.draining = false;
    }
  }

  private toRow(task: EventTask, o: EventOutcome, tag: Tag): EventRow {
    const { run } = this;
    this.tally.calls += o.calls;
    this.tally.retries += o.calls - 1;
    this.tally.promptTokens += o.promptTokens;
    this.tally.completionTokens += o.completionTokens;
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
      seed: task.plan.seed,
      event: task.plan.event,
      sweep: task.plan.sweep,
      agent: task.plan.agent,
      neighbours: task.plan.neighbours,
      read_versions: task.plan.readVersions,
      response: o.response,
      finish_reason: o.finishReason,
      prompt_tokens: o.promptTokens,
      completion_tokens: o.completionTokens,
      latency_ms: o.latencyMs,
      backend: this.meta.backend,
      model: this.meta.model,
      tag,
      judge_model: this.judge.model,
      embeddings: o.embeddings,
      created_at: o.createdAt,
    };
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
