import { existsSync, openSync, readSync, closeSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { redact } from '@panta/core';
import {
  eventsDir,
  logPath,
  partsDir,
  partsRoot,
  queryRows,
  readLiveStatus,
  readRunRecords,
  sqlString,
  type LiveStatus,
} from '@panta/corpus';
import { readCorpusManifest } from './load-corpus.js';

/** One open run on the dashboard. */
export interface RunView {
  run: string;
  written: number;
  /** Its events, (sweeps + 1) N; null when the source does not say. */
  total: number | null;
  inflight: number;
}

/** One sweep's progress as the dashboard shows it; null where the source does not know. */
export interface SweepView {
  id: string;
  name: string;
  /** running, complete, failed, stopped, published, finishing, done, ... (the source's word). */
  phase: string;
  /** A process reported within the last few seconds. */
  live: boolean;
  /** Who reports, and how recently. */
  liveNote: string;
  eventsWritten: number;
  /** Events answered, ahead of eventsWritten while rows wait to be appended; absent where the source does not say. */
  eventsExecuted?: number;
  eventsTotal: number;
  eventsPerSecond: number;
  inflight: number;
  calls: number | null;
  tokens: number | null;
  retries: number | null;
  requeued: number | null;
  runsTotal: number;
  runsFinished: number;
  runsActive: number;
  runsFailed: number;
  runs: RunView[];
  /** The last lines of the sweep's log (embedded: <out>/log.jsonl), oldest first. */
  log: string[];
}

/** Queue depth of the distributed mode. */
export interface QueueView {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

export interface ProgressReading {
  sweeps: SweepView[];
  queue?: QueueView;
  /** Corpus folders to draw order-parameter curves from. */
  corpora: string[];
  /** Things to say at the top of the page (a corpus folder that is not there, say). */
  notes: string[];
}

/** A live status older than this: its process is gone (or stuck). */
export const STALE_MS = 5000;

/**
 * Progress of the sweep writing (or having written) a corpus folder. While `panta run` writes it,
 * `<out>/.state/status.json` is rewritten every second and is read as is; otherwise (the process is gone, or
 * the corpus is written by a collector) progress is read from disk: finalized shards, the durable parts of
 * unfinished runs (row counts from their Parquet footers, cached: parts never change once written), the
 * run journal (calls, retries, failed runs) and the manifest.
 */
export class CorpusProgress {
  readonly dir: string;
  private readonly rows = new Map<string, number>();

  /** Throws InputError (one line) when `dir` is not a corpus. */
  constructor(dirArg: string) {
    readCorpusManifest(dirArg);
    this.dir = resolve(dirArg);
  }

  async read(now = Date.now()): Promise<SweepView> {
    const manifest = readCorpusManifest(this.dir);
    const live = readLiveStatus(this.dir);
    const log = tailLog(logPath(this.dir), 8);
    const base = { id: manifest.name, name: manifest.name, log };
    if (live && live.state === 'running' && now - live.updatedAt < STALE_MS) {
      return { ...base, ...fromLive(live), phase: 'running', live: true, liveNote: `panta run (pid ${live.pid}) reporting` };
    }
    const disk = await this.fromDisk(manifest.spec as { sweeps?: number });
    const journal = [...readRunRecords(this.dir).values()];
    const finalized = new Set(disk.finalized);
    const failed = journal.filter((r) => r.status === 'failed' && !finalized.has(r.run_id)).length;
    const complete = manifest.status === 'complete';
    const age = live ? `last report ${Math.round((now - live.updatedAt) / 1000)} s ago` : 'no status file';
    const phase = live?.state === 'stopped' && !complete ? 'stopped' : manifest.status;
    return {
      ...base,
      phase,
      live: false,
      liveNote: complete ? 'sweep complete' : `no process reporting (${age}): progress read from the durable shards`,
      eventsWritten: complete ? manifest.events.planned : disk.written,
      eventsTotal: manifest.events.planned,
      eventsPerSecond: 0,
      inflight: 0,
      calls: journal.reduce((s, r) => s + r.calls, 0),
      tokens: null,
      retries: journal.reduce((s, r) => s + r.retries, 0),
      requeued: null,
      runsTotal: manifest.runs.planned,
      runsFinished: finalized.size + failed,
      runsActive: 0,
      runsFailed: failed,
      runs: disk.open,
    };
  }

  /** Rows durably written: finalized shards and contiguous parts of unfinished runs. */
  private async fromDisk(spec: { sweeps?: number }): Promise<{ written: number; finalized: string[]; open: RunView[] }> {
    const events = eventsDir(this.dir);
    if (!existsSync(events)) return { written: 0, finalized: [], open: [] };
    const finalized = readdirSync(events).filter((f) => f.endsWith('.parquet') && !f.startsWith('.'));
    const parts = partsRoot(this.dir);
    const openRuns = existsSync(parts) ? readdirSync(parts).filter((r) => !finalized.includes(`${r}.parquet`)) : [];
    const partFiles = new Map(
      openRuns.map((r) => [
        r,
        safeList(partsDir(this.dir, r))
          .filter((f) => /^part-\d+\.parquet$/.test(f))
          .map((f) => join(partsDir(this.dir, r), f)),
      ]),
    );
    const files = [...finalized.map((f) => join(events, f)), ...[...partFiles.values()].flat()];
    await this.countRows(files);
    const rowsOf = (f: string) => this.rows.get(f) ?? 0;
    const open = openRuns.map((run) => ({
      run,
      written: (partFiles.get(run) ?? []).reduce((s, f) => s + rowsOf(f), 0),
      total: runTotal(run, spec.sweeps ?? 10),
      inflight: 0,
    }));
    return { written: files.reduce((s, f) => s + rowsOf(f), 0), finalized: finalized.map((f) => f.slice(0, -'.parquet'.length)), open };
  }

  private async countRows(files: string[]): Promise<void> {
    const missing = files.filter((f) => !this.rows.has(f));
    if (missing.length === 0) return;
    try {
      const rows = await queryRows(
        `SELECT file_name, num_rows::DOUBLE AS n FROM parquet_file_metadata([${missing.map(sqlString).join(', ')}])`,
      );
      for (const r of rows) this.rows.set(String(r.file_name), Number(r.n));
    } catch {
      // a part renamed or deleted between the listing and the read: counted on the next read
    }
  }
}

function fromLive(s: LiveStatus) {
  return {
    eventsWritten: s.eventsWritten,
    ...(s.eventsExecuted !== undefined ? { eventsExecuted: s.eventsExecuted } : {}),
    eventsTotal: s.eventsTotal,
    eventsPerSecond: s.eventsPerSecond,
    inflight: s.inflight,
    calls: s.calls,
    tokens: s.tokens,
    retries: s.retries,
    requeued: null,
    runsTotal: s.runsTotal,
    runsFinished: s.runsFinished,
    runsActive: s.runsActive,
    runsFailed: s.runsFailed,
    runs: s.runs,
  };
}

/** (sweeps + 1) N from a run id (`fq117-ring-n64-T0.7-glauber-t0`); null when it names no N. */
function runTotal(runId: string, sweeps: number): number | null {
  const m = /-n(\d+)-/.exec(runId);
  return m ? (sweeps + 1) * Number(m[1]) : null;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * The last `count` lines of a JSON-lines log, each as "time level msg run": read from its last 16 KiB;
 * redacted again, for a log written before Panta redacted its lines.
 */
export function tailLog(file: string, count: number): string[] {
  if (!existsSync(file)) return [];
  const size = statSync(file).size;
  const length = Math.min(size, 16 * 1024);
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  const lines = buffer
    .toString('utf8')
    .split('\n')
    .filter((l) => l.startsWith('{') && l.endsWith('}'));
  const levels: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
  return lines.slice(-count).map((line) => {
    try {
      const o = JSON.parse(line) as { time?: number; level?: number; msg?: string; run?: string; err?: string | { message?: string } };
      const time = o.time ? new Date(o.time).toISOString().slice(11, 19) : '';
      const err = typeof o.err === 'object' && o.err !== null ? o.err.message : o.err;
      return redact([time, levels[o.level ?? 30] ?? '', o.msg ?? '', o.run ?? '', err ? `(${err})` : ''].filter(Boolean).join(' '));
    } catch {
      return redact(line);
    }
  });
}
