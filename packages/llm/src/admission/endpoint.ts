import { appendFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { AdmissionLimit, parseVllmMetrics, QueueClock, type ServerLoad } from '@panta/core';

/** Metrics polls while requests are open on the endpoint (ms). */
export const METRICS_POLL_MS = 250;
/** The limit an endpoint that serves vLLM's metrics starts from (it grows by half a poll while none wait). */
export const METRICS_INITIAL_LIMIT = 4;

export interface EndpointAdmissionOptions {
  /** `max_in_flight`: the limit never goes above it. */
  max: number;
  /** Poll interval (default METRICS_POLL_MS). */
  pollMs?: number;
  /** Requests this client has open on the endpoint now. */
  inFlight: () => number;
  /** KV tokens of those requests (prompt estimate + max_tokens each; tokens admission). Default: none known. */
  openTokens?: () => number;
  /** Called when the limit may have grown (the pool lets waiters in). */
  changed: () => void;
  /** Requests waiting in this client for any endpoint's admission (for the admission trace). */
  queued?: () => number;
}

/**
 * With PANTA_ADMISSION_TRACE=PREFIX set, every metrics poll appends one line to PREFIX.PID: `ms endpoint open
 * openTokens tokenBudget limit queued waiting running kvUsage capacity` (ms since the epoch; the client's side
 * and the server's side of one moment), which bench/gpu-sim.mjs reads (--hop-trace). Unset, nothing is written.
 */
const ADMISSION_TRACE = process.env.PANTA_ADMISSION_TRACE ? `${process.env.PANTA_ADMISSION_TRACE}.${process.pid}` : undefined;
const traceLines: string[] = [];
function traceAdmission(line: string): void {
  if (!ADMISSION_TRACE) return;
  if (traceLines.push(line) === 1) process.once('exit', flushAdmissionTrace);
  if (traceLines.length >= 1024) flushAdmissionTrace();
}
function flushAdmissionTrace(): void {
  if (!ADMISSION_TRACE || traceLines.length === 0) return;
  appendFileSync(ADMISSION_TRACE, traceLines.join(''));
  traceLines.length = 0;
}

/**
 * One endpoint's admission (see AdmissionLimit in @panta/core for the rules): `probe()` asks the server for
 * vLLM's Prometheus `/metrics` (the API root less `/v1`, plus `/metrics`) once; where it answers with vLLM's
 * names the limit follows the server's load, polled every `pollMs` while this client has requests open there,
 * and the time the server reports requests waiting is kept (`queueClock`) so that timeouts leave it out.
 * Where the metrics also give the KV cache's size (`vllm:cache_config_info`), admission counts tokens
 * (`roomFor`): the requests' KV tokens open on the endpoint kept near the limit's token budget.
 * Elsewhere the limit follows measured latency (observeLatency, observeOverload).
 */
export class EndpointAdmission {
  readonly limit: AdmissionLimit;
  readonly queueClock = new QueueClock();
  readonly metricsUrl: string;
  /** Whether the server serves vLLM's metrics (known after probe()). */
  metrics = false;
  /** The latest metrics sample, for stats. */
  lastLoad: ServerLoad | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private closed = false;
  private readonly pollMs: number;
  /** When the previous poll was sent. */
  private lastPollAt: number | undefined;
  /** Most requests open at once since the previous poll: whether the limit bound in between. */
  private peakSincePoll = 0;
  /** The token budget held a request back since the previous poll (tokens mode). */
  private tokensBoundSincePoll = false;

  constructor(
    apiRoot: string,
    private readonly options: EndpointAdmissionOptions,
  ) {
    this.limit = new AdmissionLimit(options.max);
    this.metricsUrl = metricsUrlOf(apiRoot);
    this.pollMs = options.pollMs ?? METRICS_POLL_MS;
  }

  /** Asks once for `/metrics`; resolves when known (never rejects: no answer means latency mode). */
  async probe(timeoutMs: number): Promise<void> {
    const load = await fetchLoad(this.metricsUrl, timeoutMs);
    if (!load || this.closed) return;
    this.metrics = true;
    this.lastLoad = load;
    if (load.capacityTokens !== undefined) this.limit.setCapacity(load.capacityTokens);
    this.limit.reset(Math.min(this.options.max, Math.max(METRICS_INITIAL_LIMIT, this.options.inFlight())));
  }

  /** A request was let in, `open` now open with it: polling runs while requests are open. */
  active(open: number): void {
    if (open > this.peakSincePoll) this.peakSincePoll = open;
    if (!this.metrics || this.closed || this.timer || this.polling) return;
    this.timer = setTimeout(() => this.poll(), this.pollMs);
    this.timer.unref?.();
  }

  /**
   * Whether the endpoint takes one more request with `openTokens` KV tokens of this client's open there (the
   * request limit is the pool's): always outside tokens mode (see AdmissionLimit.admits).
   */
  roomFor(openTokens: number): boolean {
    if (openTokens < this.limit.tokenBudget) return true;
    this.tokensBoundSincePoll = true;
    return false;
  }

  /** A reply's latency per unit of work, and the requests open when it was sent (latency mode only). */
  observeLatency(msPerWork: number, inFlightAtSend: number): void {
    if (!this.metrics) this.limit.observeLatency(msPerWork, inFlightAtSend);
  }

  /** A timeout, 429 or 503 (latency mode only: with metrics the server's load says more). */
  observeOverload(): void {
    if (!this.metrics) this.limit.observeOverload();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    if (this.closed) return;
    this.polling = true;
    const sentAt = performance.now();
    const load = await fetchLoad(this.metricsUrl, Math.max(1000, 4 * this.pollMs));
    this.polling = false;
    if (this.closed) return;
    const now = performance.now();
    const queueing = load !== undefined && load.waiting > 0;
    // Requests began to wait at some moment since the previous poll: the pause starts from that poll, so a
    // burst queued just after it is not charged the poll interval. It ends with the poll that sees none
    // waiting. A poll that got no answer says nothing: the clock runs (a server that stopped answering is
    // not queueing).
    this.queueClock.mark(queueing ? Math.min(this.lastPollAt ?? sentAt, sentAt) : now, queueing);
    this.lastPollAt = sentAt;
    if (load) {
      this.lastLoad = load;
      const before = this.limit.limit;
      const budgetBefore = this.limit.tokenBudget;
      const open = this.options.inFlight();
      const tokens = this.options.openTokens?.() ?? 0;
      const reached = this.limit.capacityTokens === undefined ? this.peakSincePoll >= before : this.tokensBoundSincePoll;
      if (ADMISSION_TRACE)
        traceAdmission(
          `${(performance.timeOrigin + now).toFixed(1)} ${this.metricsUrl} ${open} ${tokens} ${this.limit.tokenBudget} ${this.limit.limit} ${this.options.queued?.() ?? 0} ${load.waiting} ${load.running} ${load.kvUsage ?? -1} ${load.capacityTokens ?? this.limit.capacityTokens ?? -1}\n`,
        );
      this.limit.observeLoad(load, open, reached, tokens);
      this.peakSincePoll = open;
      this.tokensBoundSincePoll = false;
      if (this.limit.limit > before || this.limit.tokenBudget > budgetBefore) this.options.changed();
    }
    if (this.options.inFlight() > 0) this.active(this.options.inFlight());
    else {
      this.queueClock.mark(now, false);
      this.lastPollAt = undefined;
    }
  }
}

/** `http://host:8000/v1` -> `http://host:8000/metrics` (vLLM serves Prometheus metrics beside its API). */
export function metricsUrlOf(apiRoot: string): string {
  const u = new URL(apiRoot);
  u.pathname = `${u.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}/metrics`;
  u.search = '';
  return u.href;
}

/** GET the metrics and read vLLM's load; undefined on any failure or where the names are absent. */
function fetchLoad(url: string, timeoutMs: number): Promise<ServerLoad | undefined> {
  return new Promise((resolve) => {
    const client = url.startsWith('https:') ? https : http;
    const req = client.get(url, { timeout: timeoutMs, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        resolve(undefined);
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => resolve(undefined));
      res.on('end', () => resolve(parseVllmMetrics(Buffer.concat(chunks).toString('utf8'))));
    });
    req.on('timeout', () => req.destroy(new Error('metrics timeout')));
    req.on('error', () => resolve(undefined));
  });
}
