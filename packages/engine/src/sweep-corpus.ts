import {
  EVENT_ROWS_SQL,
  encodeBoardVersion,
  encodeSpentVersion,
  foldLive,
  isBoardProtocol,
  isSummaryProtocol,
  runEvents,
  type BoardEntry,
  type EncoderColumn,
  type RunPlan,
} from '@panta/core';
import { SweepTrace, appendRunRecord, readEvents } from '@panta/corpus';
import type { Judge } from '@panta/judge';
import { RunRecorder, type RowMeta } from './run-recorder.js';
import { readSummaryVersions } from './ssvp-versions.js';
import type { ActiveRun } from './executor.js';
import type { Logger } from './log.js';

export interface RunEnd {
  status: 'complete' | 'failed' | 'stopped';
  error?: string;
  wallMs: number;
}

/** How an executor's run ended, as the corpus side records it. */
export function runEnd(active: ActiveRun): RunEnd {
  return {
    status: active.stopped ? 'stopped' : active.error ? 'failed' : 'complete',
    error: active.error?.message,
    wallMs: performance.now() - active.startedAt,
  };
}

/**
 * Memory for the sweep trace (answers kept for the final measurement, about 10 bytes per event plus each
 * prompt's distinct vectors). Past it, the final measurement reads the shards back instead.
 */
const TRACE_BUDGET_BYTES = 256 * 1024 * 1024;

/**
 * The corpus side of a sweep (the order-parameter service's intake): opens a run's recorder where its
 * durable rows end and closes it (finalized shard and journal record, or durable parts for a resume). The
 * embedded sweep and the cluster's collector process both go through it, so a run's shard is written one way.
 * It keeps the sweep's trace, which the final measurement uses in place of reading the shards back.
 */
export class SweepCorpus {
  readonly trace: SweepTrace;

  constructor(
    private readonly options: {
      out: string;
      columns: readonly EncoderColumn[];
      judge: Judge;
      meta: RowMeta;
      /** Rows per durable part, or per run (parts sized in bytes, see sweepSizing). */
      partRows: number | ((run: RunPlan) => number);
      log?: Logger;
      onWritten(count: number): void;
      /** Memory for the sweep trace (default 256 MiB). */
      traceBudgetBytes?: number;
    },
  ) {
    const { columns, log, traceBudgetBytes = TRACE_BUDGET_BYTES } = options;
    this.trace = new SweepTrace(columns, traceBudgetBytes, (bytes) =>
      log?.info({ bytes, budget: traceBudgetBytes }, 'sweep trace over its budget: the order parameters will be measured from the shards'),
    );
  }

  openRecorder(run: RunPlan, startEvent: number): Promise<RunRecorder> {
    const { out, columns, judge, meta, onWritten } = this.options;
    const partRows = typeof this.options.partRows === 'function' ? this.options.partRows(run) : this.options.partRows;
    // Only a run written from its first event here has every answer in the trace.
    let trace: ReturnType<SweepTrace['start']> | undefined;
    // Team runs have no order parameters (docs/teams.md): nothing to trace.
    if (startEvent === 0 && !run.controls.team) trace = this.trace.start(run.runId, run.prompt.id);
    else this.trace.forget(run.runId);
    return RunRecorder.open({ out, run, encoders: columns, judge, meta, startEvent, partRows, onWritten, trace });
  }

  async closeRun(run: RunPlan, collector: RunRecorder, end: RunEnd): Promise<void> {
    const { out, log } = this.options;
    const { status } = end;
    if (status === 'complete') {
      await collector.finalize();
      this.trace.seal(run.runId, collector.written);
    } else {
      this.trace.forget(run.runId);
      await collector.flush();
    }
    // Counted after the flush: rows it appends (outcomes that waited for a part or a verdict) count their calls
    // then, and a stopped or failed run resumes after them, so they would be counted in neither session. Such a
    // session's calls and time count toward the run's totals when it resumes.
    const { calls, retries } = collector.tally;
    await appendRunRecord(out, {
      run_id: run.runId,
      status,
      wall_ms: end.wallMs,
      calls,
      retries,
      ...(status === 'failed' ? { error: end.error } : {}),
      at: new Date().toISOString(),
    });
    if (status === 'stopped') log?.info({ run: run.runId, written: collector.written }, 'run stopped');
    else if (status === 'failed') log?.error({ run: run.runId, err: end.error, written: collector.written }, 'run failed');
    else log?.info({ run: run.runId, events: runEvents(run), wall_ms: Math.round(end.wallMs), calls, retries }, 'run finished');
  }
}

/**
 * The texts of a resumed run's live versions (each agent's latest answer), read back from its durable parts.
 * A belief-board version also carries its author's live board entries, folded from every entry it wrote.
 */
export async function readVersionTexts(
  parts: readonly string[],
  live: Float64Array,
  protocol?: string,
  pooled = false,
): Promise<Map<number, string>> {
  const texts = new Map<number, string>();
  const wanted = [...new Set(Array.from(live))].filter((v) => v >= 0);
  if (wanted.length === 0) return texts;
  if (protocol !== undefined && isSummaryProtocol(protocol)) return readSummaryVersions(parts, wanted);
  if (protocol !== undefined && isBoardProtocol(protocol)) {
    const keep = new Set(wanted);
    const boards = new Map<number, BoardEntry[]>();
    for await (const batch of readEvents(parts, { columns: ['event', 'agent', 'response', 'board'], where: EVENT_ROWS_SQL })) {
      const events = batch.columns.event as number[];
      const agents = batch.columns.agent as number[];
      const responses = batch.columns.response as string[];
      const written = batch.columns.board as (string | null)[];
      for (let r = 0; r < batch.rows; r++) {
        const entries = foldLive(boards.get(agents[r]) ?? [], written[r] ? (JSON.parse(written[r]!) as BoardEntry[]) : []);
        boards.set(agents[r], entries);
        if (keep.has(events[r])) texts.set(events[r], encodeBoardVersion({ answer: responses[r], entries }));
      }
    }
    return texts;
  }
  for await (const batch of readEvents(parts, {
    columns: ['event', 'role', 'response', 'completion_tokens'],
    where: `${EVENT_ROWS_SQL} AND event IN (${wanted.join(',')})`,
  })) {
    const events = batch.columns.event as number[];
    const responses = batch.columns.response as string[];
    const roles = batch.columns.role as string[];
    const spent = batch.columns.completion_tokens as number[];
    // A pooled relay member's version carries the tokens its call spent (the later members' shares depend on them).
    for (let r = 0; r < batch.rows; r++)
      texts.set(events[r], pooled && roles[r] === 'relay' ? encodeSpentVersion(responses[r], Number(spent[r])) : responses[r]);
  }
  return texts;
}
