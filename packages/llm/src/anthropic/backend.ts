import type Anthropic from '@anthropic-ai/sdk';
import { nodeFetch } from '../node-fetch.js';
import type { AnthropicBackendSpec, ReplyStatus } from '@panta/core';
import type { ChatRequest, ChatResult, LlmBackend } from '../backend.js';
import { chatResult, recordedReply, UnusableReplyError, type ProviderReply } from '../result.js';
import type { RealBackendOptions } from '../openai/backend.js';
import { anthropicBase, resolveApiKey } from '../openai/endpoint.js';
import { healthBounds } from '../retry/breaker.js';
import { NO_SDK_TIMEOUT, RetryingCaller } from '../retry/policy.js';
import { loadAnthropic } from '../sdk.js';

/** The SDK's default endpoint, used as the endpoint's name in errors when the spec gives none. */
const DEFAULT_BASE = 'https://api.anthropic.com';

/** The first API version that refuses temperature, top_p and top_k (a 400 even at default values). */
export const NO_SAMPLING_API_VERSION = '2026-10-21';

/**
 * Anthropic's Messages API through `@anthropic-ai/sdk` (SDK retries off; the shared RetryingCaller retries,
 * with `max_in_flight` requests open at most). Each request: the system prompt as a string, one user message,
 * max_tokens, and the temperature when the spec's `api_version` still accepts one (the default 2023-06-01
 * does; SDK 1.x would send 2026-10-21, which refuses it, so the header is pinned from the spec). No top_p
 * nor top_k: they default to off. The API has no seed, so the event's seed goes in `metadata.user_id` as
 * `seed:<seed>`, where the project's surrogate server reads it; the hosted API treats it as an opaque user id.
 * The key goes both as `Authorization: Bearer` (SDK 1.x) and `x-api-key` (older servers and proxies).
 * Text is the concatenated text blocks; finish reasons are mapped to the OpenAI vocabulary (end_turn,
 * stop_sequence: stop; max_tokens: length); prompt tokens count cache reads and writes too.
 */
export class AnthropicBackend implements LlmBackend {
  readonly kind = 'anthropic';
  readonly model: string;
  readonly endpoint: string;
  /** The client, once the SDK is loaded (sdk.ts). */
  private readonly client: Promise<Anthropic>;
  private readonly caller: RetryingCaller;
  /** false from API version 2026-10-21 on: the API refuses any temperature. */
  readonly sendsTemperature: boolean;

  constructor(
    readonly spec: AnthropicBackendSpec,
    options: RealBackendOptions = {},
  ) {
    this.model = spec.model;
    const apiKey = resolveApiKey(spec.api_key_env, options.file ?? 'sweep spec', options.env);
    const baseURL = spec.base_url === undefined ? undefined : anthropicBase(spec.base_url);
    this.endpoint = baseURL ?? process.env.ANTHROPIC_BASE_URL ?? DEFAULT_BASE;
    this.sendsTemperature = spec.api_version < NO_SAMPLING_API_VERSION;
    this.client = loadAnthropic().then(
      ({ default: Anthropic }) =>
        new Anthropic({
          apiKey,
          ...(baseURL ? { baseURL } : {}),
          maxRetries: 0,
          // The SDK's own timer is off: RetryingCaller's signal times attempts (not charging the client's lag).
          timeout: NO_SDK_TIMEOUT,
          fetch: nodeFetch(spec.max_in_flight),
          defaultHeaders: { 'anthropic-version': spec.api_version, 'x-api-key': apiKey },
        }),
    );
    this.client.catch(() => undefined); // a failed load fails every call, not the process
    this.caller = new RetryingCaller({
      backend: 'anthropic',
      endpoints: [this.endpoint],
      maxInFlight: spec.max_in_flight,
      maxRetries: spec.max_retries,
      timeoutMs: spec.timeout_ms,
      tuning: options.retry,
      onRetry: options.onRetry,
      health: healthBounds(spec),
      model: spec.model,
      onUnhealthy: options.onUnhealthy,
    });
  }

  async complete(request: ChatRequest): Promise<ChatResult> {
    const client = await this.client;
    const messages = request.messages();
    // Built once: every attempt sends the same body, with the same seed.
    const body: Record<string, unknown> = {
      model: this.model,
      max_tokens: request.maxTokens,
      ...(this.sendsTemperature ? { temperature: request.temperature } : {}),
      system: messages.system,
      messages: [{ role: 'user', content: messages.user }],
      metadata: { user_id: `seed:${request.seed}` },
    };
    const outcome = await this.caller.call<{ reply: ProviderReply; status?: Exclude<ReplyStatus, 'ok'> }>(
      async (_endpoint, signal) => {
        let reply: unknown;
        try {
          reply = await client.messages.create(body as unknown as Anthropic.MessageCreateParamsNonStreaming, {
            signal,
            timeout: NO_SDK_TIMEOUT,
            maxRetries: 0,
          });
        } catch (err) {
          // A 2xx whose body is not JSON: a reply that arrived, recorded like one once the retries are spent.
          if (err instanceof SyntaxError) throw new UnusableReplyError('unparsable', `not JSON (${err.message})`);
          throw err;
        }
        return { reply: readMessage(reply) };
      },
      recordedReply,
      { priority: request.depth ?? 0 },
    );
    return chatResult(outcome.value.reply, messages, outcome, outcome.value.status);
  }

  /** Attempts open now and the oldest one's age (ms). */
  openAttempts(): { count: number; oldestMs: number } {
    return this.caller.openAttempts();
  }

  stats(): ReturnType<RetryingCaller['stats']> {
    return this.caller.stats();
  }

  /** Fails calls still queued or open (LlmCallError, not retried). */
  async close(): Promise<void> {
    this.caller.close();
  }
}

interface MessageReply {
  text: string;
  finishReason: string;
  promptTokens: number | undefined;
  completionTokens: number | undefined;
}

const FINISH: Record<string, string> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length' };

/**
 * Checks a Messages reply: an object whose content holds text blocks with some text. A reply without text
 * blocks or with whitespace only is empty; one that is not a message object is unparsable (UnusableReplyError).
 */
export function readMessage(reply: unknown): MessageReply {
  if (typeof reply !== 'object' || reply === null) {
    throw new UnusableReplyError(
      'unparsable',
      typeof reply === 'string' ? `not JSON: ${JSON.stringify(reply.slice(0, 80))}` : `no body (${String(reply)})`,
    );
  }
  const { content, stop_reason, usage } = reply as {
    content?: unknown;
    stop_reason?: unknown;
    usage?: {
      input_tokens?: unknown;
      output_tokens?: unknown;
      cache_creation_input_tokens?: unknown;
      cache_read_input_tokens?: unknown;
    } | null;
  };
  if (!Array.isArray(content)) throw new UnusableReplyError('unparsable', 'no content');
  const text = content
    .filter(
      (b): b is { type: 'text'; text: string } => typeof b === 'object' && b !== null && b.type === 'text' && typeof b.text === 'string',
    )
    .map((b) => b.text)
    .join('');
  const input = count(usage?.input_tokens);
  const prompt =
    input === undefined
      ? undefined
      : input + (count(usage?.cache_creation_input_tokens) ?? 0) + (count(usage?.cache_read_input_tokens) ?? 0);
  const reason = typeof stop_reason === 'string' && stop_reason !== '' ? stop_reason : 'unknown';
  const said = { finishReason: FINISH[reason] ?? reason, promptTokens: prompt, completionTokens: count(usage?.output_tokens) };
  if (text.trim() === '') throw new UnusableReplyError('empty', 'no text in content', said);
  return { text, ...said };
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}
