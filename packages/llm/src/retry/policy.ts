import { DEFAULT_HEALTH_BOUNDS, type EndpointUnhealthyError, HealthBreaker, type HealthBounds } from './breaker.js';
import { classifyFailure, type Failure } from './classify.js';
import { BackendClosedError, LlmCallError } from './errors.js';
import type { EndpointAdmission } from '../admission/endpoint.js';
import { EndpointPool } from './pool.js';

/** An SDK's own timeout, off in effect (setTimeout's largest delay): RetryingCaller times each attempt. */
export const NO_SDK_TIMEOUT = 2_147_483_647;

/** Back-off constants; the defaults suit real servers, tests shrink them. */
export interface RetryTuning {
  /** First back-off ceiling (ms); doubles per retry. Default 250. */
  baseDelayMs: number;
  /** Largest back-off ceiling (ms). Default 20000. */
  maxDelayMs: number;
  /** Largest Retry-After honoured (ms); a longer one is cut to this. Default 60000. */
  maxRetryAfterMs: number;
  /** Uniform [0, 1) source of the jitter. Default Math.random (jitter needs no seed: it never reaches the corpus). */
  random: () => number;
  /**
   * After an attempt this side aborted (its timeout), its slot stays taken this long (ms) before the next
   * request may use it: the server counts the abandoned request as open until the closed connection reaches
   * it, and must never see more than max_in_flight. Default 50.
   */
  abortGraceMs: number;
}

export const DEFAULT_RETRY_TUNING: RetryTuning = {
  baseDelayMs: 250,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 60_000,
  random: Math.random,
  abortGraceMs: 50,
};

/** What a retry hook sees (for logs and metrics; it holds no key and no prompt). */
export interface RetryEvent {
  backend: string;
  endpoint: string;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  reason: string;
  status?: number;
  /** Wait before the next attempt. */
  delayMs: number;
}

/**
 * Delay before retry number `retry` (1 = the first retry): the server's Retry-After when it sent one (capped,
 * plus up to 10% / 1 s of jitter so that a crowd told the same instant does not return together), else
 * exponential back-off with full jitter: uniform in [0, min(maxDelayMs, baseDelayMs * 2^(retry - 1))].
 */
export function retryDelayMs(retry: number, failure: Pick<Failure, 'retryAfterMs'>, tuning: RetryTuning): number {
  if (failure.retryAfterMs !== undefined) {
    const after = Math.min(failure.retryAfterMs, tuning.maxRetryAfterMs);
    return after + tuning.random() * Math.min(after * 0.1, 1000);
  }
  const ceiling = Math.min(tuning.maxDelayMs, tuning.baseDelayMs * 2 ** Math.min(retry - 1, 30));
  return tuning.random() * ceiling;
}

export interface RetryingCallerOptions {
  /** `openai` | `anthropic`: names the backend in errors. */
  backend: string;
  /** One label (the base URL) per endpoint. */
  endpoints: readonly string[];
  /** Per-endpoint cap on open requests. */
  maxInFlight: number;
  maxRetries: number;
  /**
   * Per-attempt timeout: from sending the request (once admission let it go) to having read and checked the
   * whole reply, less the time the endpoint reported requests waiting in its queue (with `admission`).
   */
  timeoutMs: number;
  /**
   * Per-endpoint admission (one per endpoint): the endpoint's limit replaces `maxInFlight` as its cap (never
   * above it), polls run while requests are open, and replies feed the latency limit. Absent: a fixed cap.
   */
  admission?: readonly EndpointAdmission[];
  tuning?: Partial<RetryTuning>;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** Bounds of the per-endpoint health breaker (see HealthBreaker); default DEFAULT_HEALTH_BOUNDS. */
  health?: HealthBounds | undefined;
  /** Names the model in the breaker's fix. */
  model?: string | undefined;
  /** Called once when the breaker trips: the caller then fails every call with that error. */
  onUnhealthy?: ((error: EndpointUnhealthyError) => void) | undefined;
}

/** What one call tells admission about itself. */
export interface CallHints {
  /** Among calls waiting for a slot, higher goes first (the event's depth: the chain of calls behind it). */
  priority?: number;
  /** The call's work in tokens (prompt + weighted output), for the latency limit; default 1. */
  work?: number;
  /** The KV tokens the request may hold (prompt estimate + max_tokens), for tokens admission; default 0. */
  tokens?: number;
}

export interface CallOutcome<T> {
  value: T;
  /** Attempts made, the successful one included. */
  attempts: number;
  /** Endpoint index of the successful attempt. */
  endpoint: number;
  /** Duration of the successful attempt (ms). */
  latencyMs: number;
}

/**
 * Turns an attempt's failure into a value to keep once the retries are spent, or undefined for a failure
 * that must fail the call. For replies that arrived but are unusable: the server will send the same again.
 */
export type Recover<T> = (cause: unknown) => T | undefined;

/** A failure `recover` accepted, with its attempt's endpoint and duration. */
type Recovered<T> = { value: T; endpoint: number; latencyMs: number };

/**
 * The retry policy both real backends share. One call: take a slot on the least-busy endpoint (waiting in
 * FIFO order when all are at their cap), run one attempt under an AbortSignal that fires after `timeoutMs`,
 * give the slot back, and on a retryable failure wait (Retry-After or jittered exponential back-off, holding
 * no slot) and go again, preferring another endpoint, up to `maxRetries` retries. The attempt function gets
 * the same inputs each time: callers build the request body (and its seed) once, outside it.
 *
 * With `recover`, a call whose retries ran out returns the latest failure that `recover` accepted (with that
 * attempt's endpoint and duration) instead of failing; failures that are not retried fail as always.
 */
export class RetryingCaller {
  readonly pool: EndpointPool;
  private readonly tuning: RetryTuning;
  private readonly controllers = new Set<AbortController>();
  private readonly sleepers = new Set<() => void>();
  private closed = false;
  private attemptsMade = 0;
  private retriesMade = 0;
  private failuresMade = 0;
  private recoveredMade = 0;
  readonly breaker: HealthBreaker;
  /** Whether any attempt got a usable reply (see the recorded replies in call). */
  private answered = false;
  /** Attempts open now: when each started (performance.now()), for progress while calls hang. */
  private readonly open = new Set<{ started: number }>();

  constructor(private readonly options: RetryingCallerOptions) {
    const admission = options.admission;
    this.pool = new EndpointPool(
      options.endpoints.length,
      options.maxInFlight,
      admission ? (i) => admission[i].limit.limit : undefined,
      admission ? (i, openTokens) => admission[i].roomFor(openTokens) : undefined,
    );
    this.tuning = { ...DEFAULT_RETRY_TUNING, ...options.tuning };
    this.breaker = new HealthBreaker(options.backend, options.endpoints, options.health, options.model);
  }

  async call<T>(
    attempt: (endpoint: number, signal: AbortSignal) => Promise<T>,
    recover?: Recover<T>,
    hints: CallHints = {},
  ): Promise<CallOutcome<T>> {
    let attempts = 0;
    let avoid = -1;
    let recovered: Recovered<T> | undefined;
    for (;;) {
      const endpoint = await this.takeSlot(attempts, avoid, hints);
      attempts++;
      this.attemptsMade++;
      const tried = await this.attemptOnce(attempt, endpoint, recover, hints);
      if (tried.kind === 'ok') return { value: tried.value, attempts, endpoint, latencyMs: tried.latencyMs };
      if (tried.recovered) recovered = tried.recovered;
      if (this.breaker.trip) throw this.breaker.trip;
      const kept = this.outOfRetries(tried.failure, tried.cause, endpoint, attempts, recovered);
      if (kept) return kept;
      await this.waitToRetry(tried.failure, endpoint, attempts);
      avoid = endpoint;
    }
  }

  /** A slot on the least-busy endpoint, preferring one other than `avoid` (the last attempt's). */
  private async takeSlot(attempts: number, avoid: number, hints: CallHints): Promise<number> {
    const { endpoints } = this.options;
    if (this.breaker.trip) throw this.breaker.trip;
    if (this.closed) throw this.closedError(attempts, endpoints[Math.max(avoid, 0)]);
    try {
      return await this.pool.acquire(avoid, hints.priority ?? 0, hints.tokens ?? 0);
    } catch (err) {
      if (this.breaker.trip) throw this.breaker.trip;
      throw this.closedError(attempts, endpoints[Math.max(avoid, 0)], err);
    }
  }

  /**
   * One attempt on `endpoint` (its slot taken) under a timeout that leaves out the time the endpoint reported
   * requests queued; the slot is given back after it (a timed-out one after a grace). A failure is classified,
   * observed by the health breaker and the admission gate, and recovered when `recover` accepts it.
   */
  private async attemptOnce<T>(
    attempt: (endpoint: number, signal: AbortSignal) => Promise<T>,
    endpoint: number,
    recover: Recover<T> | undefined,
    hints: CallHints,
  ): Promise<{ kind: 'ok'; value: T; latencyMs: number } | { kind: 'failed'; failure: Failure; cause: unknown; recovered?: Recovered<T> }> {
    const { timeoutMs, admission } = this.options;
    const controller = new AbortController();
    let timedOut = false;
    const started = performance.now();
    const gate = admission?.[endpoint];
    const openAtSend = this.pool.openOn(endpoint);
    gate?.active(openAtSend);
    // The clock leaves out time the endpoint reported requests waiting in its queue: when the timer fires
    // early by that much, it is set again for what is left.
    const queuedAtSend = gate ? gate.queueClock.total(started) : 0;
    let settled = false;
    const check = (ioPolled = false): void => {
      if (settled) return;
      const now = performance.now();
      const charged = now - started - (gate ? gate.queueClock.total(now) - queuedAtSend : 0);
      if (charged < timeoutMs) {
        timer = setTimeout(check, Math.max(1, timeoutMs - charged));
        return;
      }
      // A blocked event loop makes the timer and a reply already read by the kernel due together, and timers
      // run before I/O: pending I/O runs once (setImmediate comes after the poll phase) before the abort, so
      // the client's own lag does not turn a reply into a timeout.
      if (!ioPolled) {
        setImmediate(check, true);
        return;
      }
      timedOut = true;
      controller.abort(new Error(`timeout after ${timeoutMs} ms`));
    };
    let timer = setTimeout(check, timeoutMs);
    this.controllers.add(controller);
    const openAttempt = { started };
    this.open.add(openAttempt);
    try {
      const value = await settleOrAbort(attempt(endpoint, controller.signal), controller.signal);
      const latencyMs = performance.now() - started;
      gate?.observeLatency(latencyMs / Math.max(1, hints.work ?? 1), openAtSend);
      this.answered = true;
      this.observe(endpoint, { kind: 'ok' });
      return { kind: 'ok', value, latencyMs };
    } catch (err) {
      const cause = this.closed ? new BackendClosedError('backend closed during the call') : err;
      const failure = classifyFailure(cause, timedOut, timeoutMs);
      if (timedOut || failure.status === 429 || failure.status === 503) gate?.observeOverload();
      const value = failure.retry && recover ? recover(cause) : undefined;
      const recovered = value !== undefined ? { value, endpoint, latencyMs: performance.now() - started } : undefined;
      if (!this.closed && failure.reason !== 'aborted') {
        const reason = value !== undefined && cause instanceof Error ? cause.message : failure.reason;
        this.observe(endpoint, {
          kind: value !== undefined ? 'unusable' : 'failed',
          reason,
          ...(failure.status !== undefined ? { status: failure.status } : {}),
        });
      }
      return { kind: 'failed', failure, cause, ...(recovered ? { recovered } : {}) };
    } finally {
      settled = true;
      this.open.delete(openAttempt);
      clearTimeout(timer);
      this.controllers.delete(controller);
      if (timedOut && this.tuning.abortGraceMs > 0) {
        const slot = endpoint;
        setTimeout(() => this.pool.release(slot, hints.tokens ?? 0), this.tuning.abortGraceMs);
      } else {
        this.pool.release(endpoint, hints.tokens ?? 0);
      }
    }
  }

  /**
   * After a failed attempt: the recovered failure kept as the call's answer once the retries are spent, an
   * LlmCallError for a failure not retried or retries spent with nothing recovered, else undefined (retry).
   */
  private outOfRetries<T>(
    failure: Failure,
    cause: unknown,
    endpoint: number,
    attempts: number,
    recovered: Recovered<T> | undefined,
  ): CallOutcome<T> | undefined {
    const { backend, endpoints, maxRetries } = this.options;
    // An unusable reply is the call's answer once its retries are spent, but only from a backend that has
    // given a usable reply: until then it may be an HTML page or a proxy's error page on every attempt, and
    // the call keeps trying until a usable reply proves the backend or the health breaker stops it (it must:
    // every attempt so far was bad). With max_unusable_share 1 the breaker never trips: recorded at once.
    const proven = this.answered || (this.options.health?.maxUnusableShare ?? DEFAULT_HEALTH_BOUNDS.maxUnusableShare) >= 1;
    if (failure.retry && attempts > maxRetries && recovered && proven) {
      this.recoveredMade++;
      return { ...recovered, attempts };
    }
    if (!failure.retry || (attempts > maxRetries && !recovered)) {
      this.failuresMade++;
      throw new LlmCallError({
        backend,
        endpoint: endpoints[endpoint],
        attempts,
        exhausted: failure.retry,
        reason: failure.reason,
        status: failure.status,
        cause,
      });
    }
    return undefined;
  }

  /** Waits before the next attempt (Retry-After or jittered back-off), holding no slot, and says so. */
  private async waitToRetry(failure: Failure, endpoint: number, attempts: number): Promise<void> {
    const { backend, endpoints } = this.options;
    const delayMs = retryDelayMs(attempts, failure, this.tuning);
    this.retriesMade++;
    this.options.onRetry?.({
      backend,
      endpoint: endpoints[endpoint],
      attempt: attempts,
      reason: failure.reason,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      delayMs,
    });
    await this.sleep(delayMs);
    if (this.breaker.trip) throw this.breaker.trip;
  }

  /**
   * Counters since start: attempts, retries, calls that failed for good, calls that kept a recovered failure
   * (an unusable reply); open requests per endpoint.
   */
  stats(): {
    attempts: number;
    retries: number;
    failures: number;
    recovered: number;
    inFlight: number[];
    peakInFlight: number[];
    queued: number;
    limits: number[];
  } {
    return {
      attempts: this.attemptsMade,
      retries: this.retriesMade,
      failures: this.failuresMade,
      recovered: this.recoveredMade,
      inFlight: this.pool.inFlight(),
      peakInFlight: this.pool.peakInFlight(),
      queued: this.pool.waiting,
      limits: this.options.admission
        ? this.options.admission.map((a) => a.limit.limit)
        : this.options.endpoints.map(() => this.options.maxInFlight),
    };
  }

  /** Attempts open now and the age of the oldest (ms; 0 when none): progress while calls hang. */
  openAttempts(now = performance.now()): { count: number; oldestMs: number } {
    let oldest = now;
    for (const a of this.open) if (a.started < oldest) oldest = a.started;
    return { count: this.open.size, oldestMs: now - oldest };
  }

  /** Records an attempt with the breaker; a trip fails every call (queued, sleeping, open, later) with its error. */
  private observe(endpoint: number, sample: Parameters<HealthBreaker['record']>[1]): void {
    const trip = this.breaker.record(endpoint, sample);
    if (!trip) return;
    this.options.onUnhealthy?.(trip);
    this.close(trip);
  }

  /** Fails queued, sleeping and open calls with a not-retried LlmCallError; later calls fail at once. */
  close(reason?: Error): void {
    if (this.closed) return;
    this.closed = true;
    for (const gate of this.options.admission ?? []) gate.close();
    this.pool.close(reason ?? new BackendClosedError('backend closed'));
    for (const c of this.controllers) c.abort(reason ?? new BackendClosedError('backend closed'));
    for (const wake of this.sleepers) wake();
    this.sleepers.clear();
  }

  private closedError(attempts: number, endpoint: string, cause?: unknown): LlmCallError {
    return new LlmCallError({
      backend: this.options.backend,
      endpoint,
      attempts,
      exhausted: false,
      reason: 'backend closed',
      cause: cause ?? new BackendClosedError('backend closed'),
    });
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }
}

/**
 * The attempt's promise, or a rejection as soon as its signal aborts, whichever comes first: a backstop, so
 * that the timeout bounds the attempt even if a client were to ignore the signal somewhere.
 */
function settleOrAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      work.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
