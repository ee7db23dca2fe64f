import { redact, type BackendSpec } from '@panta/core';
import { endpointList, openaiApiRoot, resolveApiKey } from './openai/endpoint.js';

/** What a role waiting for its model says every `logEveryMs`. */
export interface EndpointWait {
  /** The endpoint's API root, credentials redacted. */
  endpoint: string;
  waitedS: number;
  limitS: number;
  /** Why the last probe did not count (refused, timed out, HTTP 503), redacted. */
  last: string;
}

export interface WaitForEndpointsOptions {
  /** Gives up after this long (a model that never loads is reported, not waited for forever). */
  timeoutMs: number;
  /** How often `onWait` hears about an endpoint still down (default 10 s). */
  logEveryMs?: number;
  /** Between probes (default 1 s). */
  pollMs?: number;
  onWait?(wait: EndpointWait): void;
  signal?: AbortSignal;
  /** The clock the wait and its bound are measured on (ms; default Date.now): tests step it. */
  now?: () => number;
}

/** The model did not answer within the wait: the role stops (exit 1) and its supervisor starts it again. */
export class EndpointUnavailableError extends Error {
  override name = 'EndpointUnavailableError';
}

/**
 * The OpenAI-compatible API roots a backend calls, each with the key it sends: those a role waits for before
 * it takes work. The surrogate runs in-process; Anthropic's API is a hosted service that is up or not, and a
 * call's own retries cover its hiccups.
 */
export function endpointsOf(spec: BackendSpec, file: string): { root: string; apiKey: string }[] {
  if (spec.kind !== 'openai') return [];
  const apiKey = resolveApiKey(spec.api_key_env, file);
  return endpointList(spec.base_url).map((url) => ({ root: openaiApiRoot(url), apiKey }));
}

/**
 * One probe, `GET {root}/models`: any answer but a 5xx means the server is up and its model loaded (vLLM opens
 * its port only once the model is; a proxy in front answers 502/503 until then). A 401 or 404 counts as up:
 * waiting would not change it, and the calls report it.
 */
async function probe(root: string, apiKey: string, signal: AbortSignal): Promise<string | null> {
  try {
    const res = await fetch(`${root}/models`, { headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' }, signal });
    await res.body?.cancel().catch(() => undefined);
    return res.status >= 500 ? `HTTP ${res.status}` : null;
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    return err.cause?.code ?? (err.name === 'TimeoutError' || err.name === 'AbortError' ? 'no answer within 5 s' : err.message);
  }
}

/**
 * Waits until every endpoint answers (a model server still loading, a pod not yet scheduled), probing each
 * every `pollMs` and saying which it waits for every `logEveryMs`; rejects with EndpointUnavailableError past
 * `timeoutMs`. Resolves at once when `signal` aborts (the caller is stopping anyway).
 */
export async function waitForEndpoints(
  endpoints: readonly { root: string; apiKey: string }[],
  options: WaitForEndpointsOptions,
): Promise<void> {
  const now = options.now ?? Date.now;
  const started = now();
  const logEvery = options.logEveryMs ?? 10_000;
  const poll = options.pollMs ?? 1000;
  for (const { root, apiKey } of new Map(endpoints.map((e) => [e.root, e])).values()) {
    let loggedAt = -Infinity;
    for (;;) {
      if (options.signal?.aborted) return;
      const signals = [AbortSignal.timeout(5000), ...(options.signal ? [options.signal] : [])];
      const last = await probe(root, apiKey, AbortSignal.any(signals));
      if (last === null) break;
      const waited = now() - started;
      if (waited >= options.timeoutMs) {
        throw new EndpointUnavailableError(
          `the model endpoint ${redact(root)} did not answer within ${Math.round(options.timeoutMs / 1000)} s (last: ${redact(last)}); fix: start the model server there (or check that this host reaches it), give --base-url, or raise --wait-endpoint`,
        );
      }
      if (waited - loggedAt >= logEvery) {
        loggedAt = waited;
        options.onWait?.({
          endpoint: redact(root),
          waitedS: Math.round(waited / 1000),
          limitS: Math.round(options.timeoutMs / 1000),
          last: redact(last),
        });
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(poll, Math.max(0, options.timeoutMs - waited)));
        options.signal?.addEventListener('abort', done, { once: true });
      });
    }
  }
}
