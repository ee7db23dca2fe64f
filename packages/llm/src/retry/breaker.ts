import { boundedText, redact } from '@panta/core';

/**
 * What one attempt got from an endpoint: a usable reply, a reply that arrived but cannot be used (empty,
 * unparsable, wrong shape: the reply statuses a corpus records), or no reply at all (an HTTP error status,
 * a timeout, a refused or dropped connection).
 */
export type AttemptKind = 'ok' | 'unusable' | 'failed';

export interface AttemptSample {
  kind: AttemptKind;
  /** Key-free cause of an unusable reply or a failure (`HTTP 500: ...`, `unparsable: not JSON ...`). */
  reason?: string;
  /** HTTP status of a failed attempt, when it got one. */
  status?: number;
}

export interface HealthBounds {
  /** Attempts per endpoint in the rolling window (spec: backend.health_window, default 50). */
  window: number;
  /** Share of unusable and failed attempts in the window above which the sweep stops (backend.max_unusable_share, default 0.75). */
  maxUnusableShare: number;
  /** Attempts an endpoint must have in its window before its share counts (default min(window, 20)). */
  minAttempts?: number;
}

export const DEFAULT_HEALTH_BOUNDS: HealthBounds = { window: 50, maxUnusableShare: 0.75 };

/** A backend spec's bounds (`health_window`, `max_unusable_share`), the defaults where a spec built in code has none. */
export function healthBounds(spec: { health_window?: number; max_unusable_share?: number }): HealthBounds {
  return {
    window: spec.health_window ?? DEFAULT_HEALTH_BOUNDS.window,
    maxUnusableShare: spec.max_unusable_share ?? DEFAULT_HEALTH_BOUNDS.maxUnusableShare,
  };
}

/**
 * A backend that cannot produce answers: an endpoint refused the key (401/403), or too many of its recent
 * attempts gave unusable replies or failed. Not retried: the sweep (or judge pass) stops with `message`, one
 * line naming the endpoint, the cause and the fix. Written events stay saved; the same command resumes once
 * the endpoint is fixed.
 */
export class EndpointUnhealthyError extends Error {
  override name = 'EndpointUnhealthyError';

  constructor(
    message: string,
    /** The endpoint, credentials redacted. */
    readonly endpoint: string,
    /** The HTTP status that stopped it, when one did. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** True for an error (or an error's cause, a few levels down) that is a tripped breaker. */
export function unhealthyCause(err: unknown): EndpointUnhealthyError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    if (e instanceof EndpointUnhealthyError) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Per endpoint, a rolling window of the last `window` attempts, each usable, unusable or failed. It trips
 * (returns the error to stop with) when an endpoint refuses the key (HTTP 401 or 403: at once, no retry can
 * fix it), or when at least `minAttempts` attempts are in its window and the unusable and failed ones are more
 * than `maxUnusableShare` of them. A rate limit (429) is the server working as asked: it is not counted.
 * A lone odd reply of a real model is a few attempts of the window (its retries), far below the bound.
 * Pure: no I/O, no clock.
 */
export class HealthBreaker {
  private readonly rings: Uint8Array[];
  private readonly next: number[];
  private readonly filled: number[];
  private readonly bad: number[];
  /** The latest unusable or failed attempt's sample, per endpoint (the cause the stop names). */
  private readonly last: (AttemptSample | undefined)[];
  private readonly minAttempts: number;
  private tripped: EndpointUnhealthyError | undefined;

  constructor(
    /** `openai` | `anthropic`: names the backend in the stop line. */
    private readonly backend: string,
    /** One label (the API root) per endpoint. */
    private readonly endpoints: readonly string[],
    private readonly bounds: HealthBounds = DEFAULT_HEALTH_BOUNDS,
    /** Names the model in the fix. */
    private readonly model = '',
  ) {
    if (!(bounds.window >= 1)) throw new RangeError(`HealthBreaker needs window >= 1 (got ${bounds.window})`);
    this.minAttempts = Math.max(1, Math.min(bounds.window, bounds.minAttempts ?? 20));
    this.rings = endpoints.map(() => new Uint8Array(bounds.window));
    this.next = endpoints.map(() => 0);
    this.filled = endpoints.map(() => 0);
    this.bad = endpoints.map(() => 0);
    this.last = endpoints.map(() => undefined);
  }

  /** The error the breaker tripped with, once it has. */
  get trip(): EndpointUnhealthyError | undefined {
    return this.tripped;
  }

  /** Unusable and failed attempts in the endpoint's window, and attempts in it. */
  window(endpoint: number): { bad: number; attempts: number } {
    return { bad: this.bad[endpoint], attempts: this.filled[endpoint] };
  }

  /** Records one attempt; returns the error to stop with when this attempt trips the breaker (once). */
  record(endpoint: number, sample: AttemptSample): EndpointUnhealthyError | undefined {
    if (this.tripped) return undefined;
    if (sample.kind === 'failed' && sample.status === 429) return undefined;
    const label = redact(this.endpoints[endpoint] ?? `endpoint ${endpoint}`);
    if (sample.kind === 'failed' && (sample.status === 401 || sample.status === 403)) {
      this.tripped = new EndpointUnhealthyError(
        `${this.backend} ${label}: ${cause(sample)}: the endpoint refuses the key; fix: check backend.api_key_env and that the variable holds a key this server accepts (not retried: rerunning cannot fix it)`,
        label,
        sample.status,
      );
      return this.tripped;
    }
    const ring = this.rings[endpoint];
    const at = this.next[endpoint];
    const isBad = sample.kind === 'ok' ? 0 : 1;
    if (this.filled[endpoint] === ring.length) this.bad[endpoint] -= ring[at];
    else this.filled[endpoint]++;
    ring[at] = isBad;
    this.bad[endpoint] += isBad;
    this.next[endpoint] = (at + 1) % ring.length;
    if (isBad) this.last[endpoint] = sample;
    const attempts = this.filled[endpoint];
    const bad = this.bad[endpoint];
    if (attempts < this.minAttempts || bad / attempts <= this.bounds.maxUnusableShare) return undefined;
    const latest = this.last[endpoint]!;
    const share = `${bad} of its last ${attempts} attempts ${latest.kind === 'unusable' ? 'gave no usable reply' : 'failed'}`;
    const fix =
      latest.kind === 'unusable'
        ? `fix: check that backend.base_url is the ${this.backend === 'anthropic' ? "Anthropic API's origin" : 'OpenAI-compatible API root (.../v1)'} of a server serving ${this.model ? `model ${this.model}` : 'the model'}, not a web page or a proxy's error page`
        : 'fix: check that the model server at backend.base_url is up and reachable from this host';
    this.tripped = new EndpointUnhealthyError(
      `${this.backend} ${label}: ${share} (latest: ${cause(latest)}); ${fix}, then run the same command again: it resumes after the saved events (bound: backend.max_unusable_share ${this.bounds.maxUnusableShare} over backend.health_window ${this.bounds.window})`,
      label,
      latest.status,
    );
    return this.tripped;
  }
}

/** A sample's cause on one line, redacted, at most 200 characters of what the server said. */
function cause(sample: AttemptSample): string {
  const reason = sample.reason ?? (sample.status !== undefined ? `HTTP ${sample.status}` : sample.kind);
  return boundedText(reason, 240);
}
