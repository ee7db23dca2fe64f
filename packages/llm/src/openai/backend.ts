import type OpenAI from 'openai';
import { CHARS_PER_TOKEN, type OpenAIBackendSpec, type ReplyStatus } from '@panta/core';
import type { ChatRequest, ChatResult, LlmBackend } from '../backend.js';
import { nodeFetch } from '../node-fetch.js';
import { chatResult, recordedReply, UnusableReplyError, type ProviderReply } from '../result.js';
import { EndpointAdmission } from '../admission/endpoint.js';
import { type EndpointUnhealthyError, healthBounds } from '../retry/breaker.js';
import { EndpointUnreachableError } from '../retry/errors.js';
import { NO_SDK_TIMEOUT, RetryingCaller, type RetryEvent, type RetryTuning } from '../retry/policy.js';
import { buildChatBody } from './body.js';
import { endpointList, openaiApiRoot, resolveApiKey } from './endpoint.js';
import { probeServer, type ServerInfo, type ServerKind } from './probe.js';
import { loadOpenAI } from '../sdk.js';

/** Options of the real backends that are not part of the sweep spec (tests, logging, metrics). */
export interface RealBackendOptions {
  /** Names the sweep spec in input errors (a missing API key variable). */
  file?: string;
  /** Back-off constants (tests shrink them). */
  retry?: Partial<RetryTuning>;
  /** Called before each retry's wait: for logs and metrics. Holds no key and no prompt. */
  onRetry?: (event: RetryEvent) => void;
  /** Timeout of the `/v1/models` probe (default min(timeout_ms, 10000)). */
  probeTimeoutMs?: number;
  /** Interval of the `/metrics` polls while requests are open (default METRICS_POLL_MS). */
  metricsPollMs?: number;
  /** Where the API key variable is read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Called once when the backend's health breaker trips (every call then fails with this error). */
  onUnhealthy?: (error: EndpointUnhealthyError) => void;
}

export interface OpenAIBackendStats {
  attempts: number;
  retries: number;
  failures: number;
  inFlight: number[];
  peakInFlight: number[];
  queued: number;
  /** Requests admission lets open per endpoint now (max_in_flight, or less where the server is full). */
  limits: number[];
  /** Calls whose reply was empty or unparsable on every attempt, kept as the answer (ChatResult.replyStatus). */
  recovered: number;
  /** vLLM fixed-length replies whose usage.completion_tokens differed from max_tokens (recorded as they came). */
  fixedLengthMismatches: number;
}

/**
 * An OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenAI) through the `openai` SDK: one client per
 * endpoint with the SDK's retries off (the shared RetryingCaller retries), least-in-flight balancing with
 * `max_in_flight` per endpoint, and explicit sampling on every request (see buildChatBody).
 *
 * Fixed length: vLLM is asked for exactly max_tokens (min_tokens = max_tokens, ignore_eos). When vLLM's
 * usage.completion_tokens still differs, the reply is kept as it came (its real token count is recorded and
 * `stats().fixedLengthMismatches` counts it): another attempt with the same seed would give the same reply.
 *
 * For the same reason a reply that arrives empty or unparsable is retried, and once the retries are spent it
 * is the call's answer: "" with `replyStatus` (see UnusableReplyError). Failures without a reply (statuses,
 * timeouts, resets) still fail the call.
 */
export class OpenAICompatibleBackend implements LlmBackend {
  readonly kind = 'openai';
  readonly model: string;
  /** API roots, one per endpoint. */
  readonly endpoints: readonly string[];
  /** One client per endpoint, once the SDK is loaded (sdk.ts). */
  private readonly clients: Promise<OpenAI[]>;
  private readonly caller: RetryingCaller;
  private readonly apiKey: string;
  private readonly probeTimeoutMs: number;
  /** What each endpoint is, once known (from the spec hint, or a probe that got an answer). */
  private readonly known: (ServerInfo | undefined)[];
  /** The probes started with the backend; calls wait for them once. */
  private readonly started: Promise<void>;
  /** Ends probes still running when the backend is closed. */
  private readonly probes = new AbortController();
  private fixedLengthMismatches = 0;
  /** Per endpoint: how many requests may be open there now (admission/endpoint.ts). */
  private readonly admission: EndpointAdmission[];

  constructor(
    readonly spec: OpenAIBackendSpec,
    options: RealBackendOptions = {},
  ) {
    this.model = spec.model;
    this.endpoints = endpointList(spec.base_url).map(openaiApiRoot);
    const apiKey = resolveApiKey(spec.api_key_env, options.file ?? 'sweep spec', options.env);
    this.apiKey = apiKey;
    this.clients = loadOpenAI().then(({ default: OpenAI }) =>
      this.endpoints.map(
        // The SDK's own timeout is off: RetryingCaller's signal times attempts (leaving out server queueing).
        (baseURL) => new OpenAI({ apiKey, baseURL, maxRetries: 0, timeout: NO_SDK_TIMEOUT, fetch: nodeFetch(spec.max_in_flight) }),
      ),
    );
    this.clients.catch(() => undefined); // a failed load fails every call, not the process
    this.admission = this.endpoints.map(
      (root, i) =>
        new EndpointAdmission(root, {
          max: spec.max_in_flight,
          pollMs: options.metricsPollMs,
          inFlight: () => this.caller.pool.openOn(i),
          openTokens: () => this.caller.pool.tokensOn(i),
          changed: () => this.caller.pool.kick(),
          queued: () => this.caller.pool.waiting,
        }),
    );
    this.caller = new RetryingCaller({
      backend: 'openai',
      endpoints: this.endpoints,
      maxInFlight: spec.max_in_flight,
      maxRetries: spec.max_retries,
      timeoutMs: spec.timeout_ms,
      admission: this.admission,
      tuning: options.retry,
      onRetry: options.onRetry,
      health: healthBounds(spec),
      model: spec.model,
      onUnhealthy: options.onUnhealthy,
    });
    this.probeTimeoutMs = options.probeTimeoutMs ?? Math.min(spec.timeout_ms, 10_000);
    const hint = spec.server;
    this.known = this.endpoints.map(() => (hint ? { server: hint, fromSpec: true } : undefined));
    // What each endpoint is (the hint, or its /v1/models), then for vLLM whether it serves its /metrics:
    // admission follows them where it does. Other servers are not asked (llama.cpp's metrics, when on, have
    // other names; hosted APIs have none).
    const metricsTimeoutMs = Math.min(this.probeTimeoutMs, 2000);
    this.started = Promise.all(
      this.endpoints.map(async (root, i) => {
        if (!hint)
          this.known[i] = await probeServer(
            root,
            apiKey,
            spec.model,
            AbortSignal.any([this.probes.signal, AbortSignal.timeout(this.probeTimeoutMs)]),
          );
        if (this.known[i]?.server === 'vllm') await this.admission[i].probe(metricsTimeoutMs);
      }),
    ).then(() => undefined);
  }

  /**
   * What each endpoint is: the spec's `server` hint, or what `GET /v1/models` said (undefined for an endpoint
   * that has not answered yet).
   */
  async serverInfo(): Promise<(ServerInfo | undefined)[]> {
    await this.started;
    return [...this.known];
  }

  /** The endpoint's kind; an endpoint that did not answer its probe is asked again, within the attempt. */
  private async serverOf(endpoint: number, signal: AbortSignal): Promise<ServerKind> {
    const known = this.known[endpoint];
    if (known) return known.server;
    const info = await probeServer(
      this.endpoints[endpoint],
      this.apiKey,
      this.model,
      AbortSignal.any([signal, AbortSignal.timeout(this.probeTimeoutMs)]),
    );
    if (!info) throw new EndpointUnreachableError(`${this.endpoints[endpoint]}/models did not answer`);
    this.known[endpoint] = info;
    return info.server;
  }

  async complete(request: ChatRequest): Promise<ChatResult> {
    await this.started;
    const clients = await this.clients;
    const messages = request.messages();
    const depth = request.depth ?? 0;
    const sampling = this.spec.priority
      ? {
          seed: request.seed,
          temperature: request.temperature,
          maxTokens: request.maxTokens,
          fixedLength: request.fixedLength,
          priority: 0 - Math.round(depth),
        }
      : request;
    // One body per server kind, built once: every attempt of this event sends the same body and seed.
    const bodies = new Map<ServerKind, Record<string, unknown>>();
    const bodyFor = (server: ServerKind): Record<string, unknown> => {
      let body = bodies.get(server);
      if (!body) bodies.set(server, (body = buildChatBody(this.model, messages, sampling, server, this.spec.thinking)));
      return body;
    };
    const outcome = await this.caller.call<{ reply: ProviderReply; server?: ServerKind; status?: Exclude<ReplyStatus, 'ok'> }>(
      async (endpoint, signal) => {
        const server = await this.serverOf(endpoint, signal);
        let reply: unknown;
        try {
          reply = await clients[endpoint].chat.completions.create(
            bodyFor(server) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming,
            { signal, timeout: NO_SDK_TIMEOUT, maxRetries: 0 },
          );
        } catch (err) {
          // A 2xx whose body is not JSON: a reply that arrived, recorded like one once the retries are spent.
          if (err instanceof SyntaxError) throw new UnusableReplyError('unparsable', `not JSON (${err.message})`);
          throw err;
        }
        return { reply: readCompletion(reply), server };
      },
      recordedReply,
      { priority: depth, work: workOf(messages, request.maxTokens), tokens: kvTokensOf(messages, request.maxTokens) },
    );
    const { reply, server, status } = outcome.value;
    if (server === 'vllm' && request.fixedLength && reply.completionTokens !== request.maxTokens) this.fixedLengthMismatches++;
    return chatResult(reply, messages, outcome, status);
  }

  /** Attempts open now and the oldest one's age (ms). */
  openAttempts(): { count: number; oldestMs: number } {
    return this.caller.openAttempts();
  }

  stats(): OpenAIBackendStats {
    return { ...this.caller.stats(), fixedLengthMismatches: this.fixedLengthMismatches };
  }

  /** Fails calls still queued or open (LlmCallError, not retried). */
  async close(): Promise<void> {
    this.probes.abort();
    this.caller.close();
  }
}

/**
 * A call's work in prompt-token equivalents, for the latency limit: prompt characters / 4, plus the output
 * tokens at 2.5 each (the h100-qwen3-14b cost model in @panta/core: 220 us a decoded token, 88 us a prefilled one).
 */
function workOf(messages: { system: string; user: string }, maxTokens: number): number {
  return (messages.system.length + messages.user.length) / 4 + 2.5 * maxTokens;
}

/**
 * The KV tokens a request may hold, for tokens admission: its prompt by the plan's estimate (CHARS_PER_TOKEN
 * characters a token) plus max_tokens (vLLM reserves blocks for both).
 */
function kvTokensOf(messages: { system: string; user: string }, maxTokens: number): number {
  return Math.ceil((messages.system.length + messages.user.length) / CHARS_PER_TOKEN) + maxTokens;
}

interface Completion {
  text: string;
  finishReason: string;
  promptTokens: number | undefined;
  completionTokens: number | undefined;
}

/**
 * Checks a chat completion: a JSON object with choices[0].message.content a string with some text. Content
 * null or whitespace only is an empty reply; anything else missing is an unparsable one (UnusableReplyError).
 */
export function readCompletion(reply: unknown): Completion {
  if (typeof reply !== 'object' || reply === null) {
    throw new UnusableReplyError(
      'unparsable',
      typeof reply === 'string' ? `not JSON: ${JSON.stringify(reply.slice(0, 200))}` : `no body (${String(reply)})`,
    );
  }
  const { choices, usage } = reply as { choices?: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null };
  if (!Array.isArray(choices) || choices.length === 0)
    throw new UnusableReplyError('unparsable', `no choices: ${JSON.stringify(reply).slice(0, 200)}`);
  const choice = choices[0] as { message?: { content?: unknown } | null; finish_reason?: unknown } | null;
  const said = {
    finishReason: typeof choice?.finish_reason === 'string' && choice.finish_reason !== '' ? choice.finish_reason : 'unknown',
    promptTokens: count(usage?.prompt_tokens),
    completionTokens: count(usage?.completion_tokens),
  };
  const message = choice?.message;
  if (typeof message !== 'object' || message === null) throw new UnusableReplyError('unparsable', 'choices[0].message is missing', said);
  const content = message.content;
  // null: a reply with no text (a refusal, or thinking that used every token).
  if (content === null || content === undefined) throw new UnusableReplyError('empty', 'choices[0].message.content is missing', said);
  if (typeof content !== 'string') throw new UnusableReplyError('unparsable', 'choices[0].message.content is not a string', said);
  if (content.trim() === '') throw new UnusableReplyError('empty', 'choices[0].message.content is empty', said);
  return { text: content, ...said };
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}
