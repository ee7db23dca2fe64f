import { SingleBar } from 'cli-progress';
import type { SweepProgress } from '@panta/engine';
import { RateMeter, etaSeconds, formatEta, formatRate } from './rate.js';

/**
 * Progress of a sweep: a bar on a terminal, a plain line every few seconds otherwise (CI logs, files).
 * Rates are this session's (events found on disk by a resume are not its pace), over about the last 20 s;
 * tokens are those the model generated. The ETA comes from the smoothed event rate and is shown once a
 * few seconds have been seen.
 */
export class ProgressView {
  private bar?: SingleBar;
  private readonly meters = { events: new RateMeter(), calls: new RateMeter(), tokens: new RateMeter() };
  private sampledAt = Number.NEGATIVE_INFINITY;
  private lastLine = Number.NEGATIVE_INFINITY;
  private latest?: SweepProgress;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  update(p: SweepProgress): void {
    this.latest = p;
    const now = performance.now();
    if (now - this.sampledAt < 250) return;
    this.sampledAt = now;
    this.meters.events.add(now, p.eventsWritten - p.eventsOnDisk);
    this.meters.calls.add(now, p.calls);
    this.meters.tokens.add(now, p.completionTokens);
    const payload = {
      rate: formatRate(this.meters.events.perSecond()),
      calls: formatRate(this.meters.calls.perSecond()),
      tokens: formatRate(this.meters.tokens.perSecond()),
      inflight: p.inflight,
      runs: p.runsFinished,
      runsTotal: p.runsTotal,
      etaText: formatEta(etaSeconds(p.eventsTotal - p.eventsWritten, this.meters.events)),
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

  /** A line of its own: on a terminal it clears the bar's line first (the bar is redrawn at the next update). */
  note(line: string): void {
    this.stream.write(this.bar ? `\r\x1b[K${line}\n` : `${line}\n`);
  }

  stop(): void {
    if (this.bar && this.latest) {
      this.bar.update(this.latest.eventsWritten);
      this.bar.stop();
    }
  }
}
