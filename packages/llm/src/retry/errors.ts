import { redact } from '@panta/core';

/**
 * An LLM call that failed for good: either its retries ran out (`exhausted`), or the endpoint answered with a
 * status that no retry can fix (400, 401, 403, 404, 422, ...), after one attempt. The message names the
 * backend, the endpoint and the last cause, redacted (registered keys, URL credentials, credential headers):
 * it is what logs, journals and the console show. `cause` keeps the SDK's error as thrown, for debugging.
 */
export class LlmCallError extends Error {
  override name = 'LlmCallError';
  /** Attempts made, the first included (max_retries + 1 when exhausted). */
  readonly attempts: number;
  /** The endpoint of the last attempt. */
  readonly endpoint: string;
  /** HTTP status of the last attempt, when it got one. */
  readonly status: number | undefined;
  /** true: retryable failures until max_retries ran out; false: a failure that is not retried. */
  readonly exhausted: boolean;
  /** Short reason of the last failure (e.g. `HTTP 503`, `timeout after 2000 ms`, `connection reset`). */
  readonly reason: string;

  constructor(init: {
    backend: string;
    endpoint: string;
    attempts: number;
    exhausted: boolean;
    reason: string;
    status?: number | undefined;
    cause: unknown;
  }) {
    const endpoint = redact(init.endpoint);
    const reason = redact(init.reason);
    const head = `${init.backend} ${endpoint}`;
    const message = init.exhausted
      ? `${head}: gave up after ${init.attempts} attempt${init.attempts === 1 ? '' : 's'}; last failure: ${reason}`
      : `${head}: ${reason} (not retried)${hint(init.status)}`;
    super(message, { cause: init.cause });
    this.attempts = init.attempts;
    this.endpoint = endpoint;
    this.status = init.status;
    this.exhausted = init.exhausted;
    this.reason = reason;
  }
}

function hint(status: number | undefined): string {
  switch (status) {
    case 401:
    case 403:
      return '; check the backend api_key_env and that the variable holds a valid key';
    case 404:
      return '; check the backend base_url and model';
    default:
      return '';
  }
}

/** A 2xx reply that cannot be used: not JSON, no choices, no text. Retried like a 5xx. */
export class MalformedReplyError extends Error {
  override name = 'MalformedReplyError';
}

/** Raised into calls still queued or in flight when the backend is closed. Not retried. */
export class BackendClosedError extends Error {
  override name = 'BackendClosedError';
}

/** An endpoint that could not be reached to learn what server it is (its `/v1/models` probe). Retried. */
export class EndpointUnreachableError extends Error {
  override name = 'EndpointUnreachableError';
}
