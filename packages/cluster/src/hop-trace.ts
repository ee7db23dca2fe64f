import { appendFileSync } from 'node:fs';

/**
 * The hop between two calls of a chain, traced: with PANTA_HOP_TRACE=PREFIX set, each role appends one line
 * per event and point to PREFIX.ROLE.PID (`point run event ms`, ms since the epoch with a fraction, from one
 * clock for every process of a machine), where bench/lib/hops.mjs reads them. Unset, `hopTrace` is undefined
 * and a traced point costs one comparison.
 */
export interface HopTrace {
  /** `at`: the moment (ms since the epoch) when it was not now. */
  point(point: string, run: string, event: number, at?: number): void;
}

const LINES_PER_WRITE = 4096;

class FileHopTrace implements HopTrace {
  private lines: string[] = [];
  private timer?: NodeJS.Timeout;

  constructor(private readonly file: string) {
    process.once('exit', () => this.flush());
  }

  point(point: string, run: string, event: number, at = performance.timeOrigin + performance.now()): void {
    this.lines.push(`${point} ${run} ${event} ${at.toFixed(3)}\n`);
    if (this.lines.length >= LINES_PER_WRITE) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), 1000);
      this.timer.unref();
    }
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lines.length === 0) return;
    const text = this.lines.join('');
    this.lines = [];
    appendFileSync(this.file, text);
  }
}

const traces = new Map<string, HopTrace>();

/** This process's trace for `role`, or undefined when PANTA_HOP_TRACE is not set. */
export function hopTraceFor(role: string): HopTrace | undefined {
  const prefix = process.env.PANTA_HOP_TRACE;
  if (!prefix) return undefined;
  let trace = traces.get(role);
  if (!trace) traces.set(role, (trace = new FileHopTrace(`${prefix}.${role}.${process.pid}`)));
  return trace;
}
