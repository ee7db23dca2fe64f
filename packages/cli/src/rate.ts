/**
 * The pace of a counter over roughly the last `windowMs`: both the counter's increments and the time they
 * took decay by e^(-dt / windowMs), and the rate is their ratio. Unlike a ratio of two samples a few seconds
 * apart, a burst (a run's parts written at once, replies arriving in a wave) moves it a little, not by a
 * factor of ten; unlike an average since the start, it follows a change of pace within a window. Before the
 * window has filled it is the plain average since the first reading.
 */
export class RateMeter {
  private increments = 0;
  private span = 0;
  private observed = 0;
  private last?: { t: number; value: number };

  constructor(readonly windowMs = 20_000) {}

  /** The counter's value at time `t` (ms). A counter that goes down starts over from there. */
  add(t: number, value: number): void {
    const last = this.last;
    if (last && t <= last.t) return;
    this.last = { t, value };
    if (!last) return;
    const dt = t - last.t;
    const decay = Math.exp(-dt / this.windowMs);
    this.increments = this.increments * decay + Math.max(0, value - last.value);
    this.span = this.span * decay + dt;
    this.observed += dt;
  }

  /** ms between the first reading and the last. */
  get observedMs(): number {
    return this.observed;
  }

  /** Per second; undefined before a second has been observed. */
  perSecond(): number | undefined {
    return this.observed < 1000 || this.span <= 0 ? undefined : (this.increments * 1000) / this.span;
  }
}

/** Before this much has been seen, an ETA would be a guess: it is not shown. */
export const ETA_MIN_OBSERVED_MS = 5000;

/** Seconds left at the meter's pace for `remaining` units; undefined until the meter has enough signal. */
export function etaSeconds(remaining: number, meter: RateMeter): number | undefined {
  if (remaining <= 0) return 0;
  const rate = meter.perSecond();
  if (meter.observedMs < ETA_MIN_OBSERVED_MS || rate === undefined || rate <= 0) return undefined;
  return remaining / rate;
}

/** 45s, 2m05s, 1h07m; '--' for no estimate. */
export function formatEta(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '--';
  const s = Math.round(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** A rate for display: whole numbers with separators, '--' before there is one. */
export function formatRate(perSecond: number | undefined): string {
  return perSecond === undefined ? '--' : Math.round(perSecond).toLocaleString('en-US');
}
