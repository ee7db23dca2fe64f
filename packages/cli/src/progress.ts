import { SingleBar } from 'cli-progress';
import type { SweepProgress } from '@panta/engine';

/**
 * Progress of a sweep: a bar on a terminal, a plain line every few seconds otherwise (CI logs, files).
 * Events/s is measured over the last few seconds, so that the ETA follows the current pace.
 */
export class ProgressView {
  private bar?: SingleBar;
  private samples: { t: number; events: number; calls: number; tokens: number }[] = [];
  private lastLine = 0;
  private latest?: SweepProgress;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  update(p: SweepProgress): void {
    this.latest = p;
    const now = Date.now();
    const last = this.samples.at(-1);
    if (!last || now - last.t >= 250) {
      this.samples.push({ t: now, events: p.eventsWritten, calls: p.calls, tokens: p.tokens });
      while (this.samples.length > 2 && now - this.samples[0]!.t > 5000) this.samples.shift();
    } else return;
    const rate = this.rate('events');
    const eta = rate > 0 ? (p.eventsTotal - p.eventsWritten) / rate : Number.POSITIVE_INFINITY;
    const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
    const payload = {
      rate: fmt(rate),
      calls: fmt(this.rate('calls')),
      tokens: fmt(this.rate('tokens')),
      inflight: p.inflight,
      runs: p.runsFinished,
      runsTotal: p.runsTotal,
      etaText: formatEta(eta),
    };
    if (this.stream.isTTY) {
      if (!this.bar) {
        this.bar = new SingleBar(
          {
            stream: this.stream,
            format: 'events {bar} {value}/{total} | {rate} ev/s | calls in flight {inflight}, {calls}/s | {tokens} tok/s | runs {runs}/{runsTotal} | ETA {etaText}',
            barsize: 24,
            hideCursor: true,
            etaBuffer: 1,
          },
        );
        this.bar.start(p.eventsTotal, p.eventsWritten, payload);
      }
      this.bar.update(p.eventsWritten, payload);
    } else if (now - this.lastLine >= 5000) {
      this.lastLine = now;
      this.stream.write(
        `events ${p.eventsWritten}/${p.eventsTotal} | ${payload.rate} ev/s | calls in flight ${p.inflight}, ${payload.calls}/s | ${payload.tokens} tok/s | runs ${p.runsFinished}/${p.runsTotal} | ETA ${payload.etaText}\n`,
      );
    }
  }

  private rate(what: 'events' | 'calls' | 'tokens'): number {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.t === first.t) return 0;
    return ((last[what] - first[what]) * 1000) / (last.t - first.t);
  }

  stop(): void {
    if (this.bar && this.latest) {
      this.bar.update(this.latest.eventsWritten);
      this.bar.stop();
    }
  }
}

function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--';
  const s = Math.round(seconds);
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
