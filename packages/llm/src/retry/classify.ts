import { boundedText } from '@panta/core';
import { BackendClosedError, EndpointUnreachableError, MalformedReplyError } from './errors.js';

type ErrorClass = abstract new (...args: never[]) => Error;

/** The error classes an SDK exports (openai and @anthropic-ai/sdk share these names). */
export interface SdkErrorClasses {
  APIConnectionTimeoutError: ErrorClass;
  APIUserAbortError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIError: ErrorClass;
}

/** SDKs loaded so far (sdk.ts registers each as it loads it). */
const sdks: SdkErrorClasses[] = [];

export function registerSdkErrors(sdk: SdkErrorClasses): void {
  if (!sdks.includes(sdk)) sdks.push(sdk);
}

function isSdkError(err: unknown, kind: keyof SdkErrorClasses): err is Error & { status?: unknown; headers?: unknown } {
  for (const sdk of sdks) if (err instanceof sdk[kind]) return true;
  return false;
}

/** What one failed attempt means for the call. */
export interface Failure {
  retry: boolean;
  /** Short, key-free description: `HTTP 503: overloaded`, `timeout after 2000 ms`, `connection reset (ECONNRESET)`. */
  reason: string;
  status?: number;
  /** The server's Retry-After (or retry-after-ms), in ms, when it sent one. */
  retryAfterMs?: number;
}

/** Statuses worth another attempt: request timeout, conflict/lock, rate limit, every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Error codes of a dropped or refused connection (Node sockets, undici), anywhere in the cause chain. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_ABORTED',
]);

/**
 * Classifies the error of one attempt. `timedOut`: the attempt's own timer fired (whatever the SDK then
 * threw: an abort error, a connection timeout, a body read cut short); `timeoutMs` names it.
 */
export function classifyFailure(err: unknown, timedOut: boolean, timeoutMs: number): Failure {
  if (err instanceof BackendClosedError) return { retry: false, reason: err.message };
  if (timedOut) return { retry: true, reason: `timeout after ${timeoutMs} ms` };
  if (isSdkError(err, 'APIConnectionTimeoutError')) {
    return { retry: true, reason: `timeout after ${timeoutMs} ms` };
  }
  if (isSdkError(err, 'APIUserAbortError')) {
    return { retry: false, reason: 'aborted' };
  }
  if (isSdkError(err, 'APIConnectionError')) {
    return { retry: true, reason: `connection failed${describeCause(err)}` };
  }
  if (isSdkError(err, 'APIError')) {
    const status = err.status as number | undefined;
    if (status === undefined) return { retry: true, reason: `no HTTP status: ${short(err.message)}` };
    const failure: Failure = {
      retry: isRetryableStatus(status),
      reason: `HTTP ${status}: ${short(err.message.replace(/^\d{3}\s+/, ''))}`,
      status,
    };
    const after = retryAfterMs(err.headers as Headers | undefined);
    if (after !== undefined) failure.retryAfterMs = after;
    return failure;
  }
  // A 2xx whose body is not JSON (response.json() throws SyntaxError) or lacks what a reply must hold.
  if (err instanceof SyntaxError) return { retry: true, reason: `malformed reply: ${short(err.message)}` };
  if (err instanceof EndpointUnreachableError) return { retry: true, reason: `connection failed (${short(err.message)})` };
  if (err instanceof MalformedReplyError) return { retry: true, reason: `malformed reply: ${short(err.message)}` };
  // A connection dropped while the body was read: undici rejects response.json() with TypeError('terminated'),
  // outside the SDK's own wrapping.
  const code = networkCode(err);
  if (code !== undefined) return { retry: true, reason: `connection lost (${code})` };
  if (err instanceof TypeError && /terminated|fetch failed|other side closed/i.test(err.message)) {
    return { retry: true, reason: `connection lost (${short(err.message)})` };
  }
  if (isAbortError(err)) return { retry: false, reason: 'aborted' };
  return { retry: false, reason: `unexpected error: ${err instanceof Error ? `${err.name}: ${short(err.message)}` : String(err)}` };
}

/** Retry-After as ms: `retry-after-ms` (float ms), else `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers || typeof headers.get !== 'function') return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0) return v;
  }
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(after);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeCause(err: Error): string {
  const code = networkCode(err);
  if (code) return ` (${code})`;
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? ` (${short(cause.message)})` : '';
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

/** Text from a server or the network (an HTTP body, a cause) on one line, redacted, at most 300 characters. */
function short(text: string): string {
  return boundedText(text, 300);
}
