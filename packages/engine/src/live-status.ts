import { writeLiveStatus, type LiveStatus } from '@panta/corpus';
import type { Executor, ExecutorProgress, RunSink } from './executor.js';

/**
 * Keeps `<out>/.state/status.json` current while a sweep runs embedded (about once a second), for
 * `panta dashboard --corpus`: progress (events executed and written), events executed per second over the
 * last 5 s, and the open runs.
 */
export class LiveStatusWriter {
  private latest?: ExecutorProgress;
  private timer?: NodeJS.Timeout;
  private readonly samples: { t: number; events: number }[] = [];

  constructor(
    private readonly out: string,
    private readonly executor: Executor<RunSink>,
    private readonly totals: { eventsTotal: number; runsTotal: number },
  ) {}

  update(progress: ExecutorProgress): void {
    this.latest = progress;
  }

  start(everyMs = 1000): void {
    this.timer = setInterval(() => this.write('running'), everyMs);
    this.timer.unref();
  }

  stop(state: 'stopped' | 'finished'): void {
    clearInterval(this.timer);
    this.write(state);
  }

  private write(state: LiveStatus['state']): void {
    const p = this.latest;
    if (!p) return;
    const now = Date.now();
    this.samples.push({ t: now, events: p.eventsExecuted });
    while (this.samples.length > 2 && now - this.samples[0].t > 5000) this.samples.shift();
    const first = this.samples[0];
    const rate = now > first.t ? ((p.eventsExecuted - first.events) * 1000) / (now - first.t) : 0;
    try {
      writeLiveStatus(this.out, {
        pid: process.pid,
        updatedAt: now,
        state,
        ...p,
        ...this.totals,
        eventsTotal: this.totals.eventsTotal - p.eventsSkipped,
        eventsPerSecond: state === 'running' ? rate : 0,
        inflight: state === 'running' ? p.inflight : 0,
        runs: state === 'running' ? this.executor.openRuns() : [],
      });
    } catch {
      // a status file that cannot be written (disk full, folder removed) must not stop the sweep
    }
  }
}
