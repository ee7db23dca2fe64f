import { SingleBar } from 'cli-progress';
import type { SweepProgress } from '@panta/engine';
import { RateMeter, etaSeconds, formatEta, formatRate } from './rate.js';

/** Per second over the last few seconds (undefined before there is signal) and seconds left. */
export interface ProgressRates {
  events?: number;
  calls?: number;
  tokens?: number;
  eta?: number;
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * The parts of a progress line after the counts: ev/s (events executed), calls in flight and their rate,
 * tokens generated per second, runs and the ETA.
 */
function tail(p: SweepProgress, r: ProgressRates): string {
  return `${formatRate(r.events)} ev/s | calls in flight ${p.inflight}, ${formatRate(r.calls)}/s${hanging(p)} | ${formatRate(r.tokens)} tok/s | runs ${p.runsFinished}/${p.runsTotal} | ETA ${formatEta(r.eta)}`;
}

/** Seconds a request may stay open before the line names it: a served model's call takes a few. */
export const HANGING_AFTER_S = 5;

/** While requests hang: how many are open and the oldest's age ("12 calls in flight, oldest 95 s"). */
function hanging(p: SweepProgress): string {
  if (p.callsOpen === undefined || p.oldestCallS === undefined || p.callsOpen === 0 || p.oldestCallS < HANGING_AFTER_S) return '';
  return ` (${count(p.callsOpen)} call${p.callsOpen === 1 ? '' : 's'} open, oldest ${count(p.oldestCallS)} s)`;
}

/**
 * The plain progress line (CI logs, files). Events executed (answered, or found on disk) and events
 * written (rows appended to the shards) are counted apart: on a large run rows wait for their turn, their
 * verdict or a part to be encoded, and a count of written rows alone would stand still while calls run.
 */
export function progressLine(p: SweepProgress, r: ProgressRates): string {
  return `events executed ${count(p.eventsExecuted)}/${count(p.eventsTotal)}, written ${count(p.eventsWritten)} | ${tail(p, r)}`;
}

/**
 * Progress of a sweep: a bar on a terminal, a plain line every few seconds otherwise (CI logs, files).
 * Rates are this session's (events found on disk by a resume are not its pace), over about the last 20 s;
 * tokens are those the model generated. The bar, the rate and the ETA follow events executed; the ETA is
 * shown once a few seconds have been seen.
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
    this.meters.events.add(now, p.eventsExecuted - p.eventsOnDisk);
    this.meters.calls.add(now, p.calls);
    this.meters.tokens.add(now, p.completionTokens);
    const rates: ProgressRates = {
      events: this.meters.events.perSecond(),
      calls: this.meters.calls.perSecond(),
      tokens: this.meters.tokens.perSecond(),
      eta: etaSeconds(p.eventsTotal - p.eventsExecuted, this.meters.events),
    };
    if (this.stream.isTTY) {
      const payload = { written: count(p.eventsWritten), tail: tail(p, rates) };
      if (!this.bar) {
        this.bar = new SingleBar({
          stream: this.stream,
          format: 'events {bar} executed {value}/{total}, written {written} | {tail}',
          barsize: 24,
          hideCursor: true,
          etaBuffer: 1,
        });
        this.bar.start(p.eventsTotal, p.eventsExecuted, payload);
      }
      this.bar.update(p.eventsExecuted, payload);
    } else if (now - this.lastLine >= 5000) {
      this.lastLine = now;
      this.stream.write(`${progressLine(p, rates)}\n`);
    }
  }

  /** A line of its own: on a terminal it clears the bar's line first (the bar is redrawn at the next update). */
  note(line: string): void {
    this.stream.write(this.bar ? `\r\x1b[K${line}\n` : `${line}\n`);
  }

  stop(): void {
    if (this.bar && this.latest) {
      this.bar.update(this.latest.eventsExecuted, { written: count(this.latest.eventsWritten), tail: tail(this.latest, {}) });
      this.bar.stop();
    }
  }
}
