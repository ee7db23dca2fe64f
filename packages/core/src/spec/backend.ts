import { z } from 'zod';

/** Models are served over HTTP: any other scheme (ftp:, file:) would only fail at the first call, after retries. */
const httpUrl = z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' });

/** setTimeout holds at most 2^31 - 1 ms (24.8 days); a longer delay would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** The surrogate: a seeded Potts-like agent, the embedded default (see packages/llm). */
export const surrogateBackendSchema = z.strictObject({
  kind: z.literal('surrogate'),
  /** Reported in the `model` column. */
  model: z.string().min(1).default('surrogate-potts-v1'),
  /** J: weight of the share of an answer among those the agent reads. */
  coupling: z.number().nonnegative().default(3),
  /** h_a per option family: accepted answers, each known false answer, "not known". */
  field: z
    .strictObject({
      correct: z.number().default(0.35),
      false: z.number().default(0.25),
      not_known: z.number().default(-0.4),
    })
    .prefault({}),
  /** Added to every known false answer's field on false-premise prompts, where models tend to play along. */
  premise_bias: z.number().default(0.35),
  /** Added to the field of the answer a hidden belief names (heterogeneous populations). */
  belief: z.number().default(2),
  /** Simulated call latency, for benchmarks of the executor (0: answer at once). */
  latency_ms: z.number().nonnegative().max(MAX_TIMER_MS).default(0),
  /**
   * The scenario model the surrogate plays (a study's, packages/studies/src/<study>/surrogate): `neutral` knows no task.
   * Absent: the scenarios each call recognises, as before scenarios were named (optional rather than
   * defaulted, so that earlier corpora keep their fingerprint). The names are checked when the sweep loads.
   */
  scenario: z
    .string()
    .regex(/^[a-z][a-z0-9-]*$/, 'a scenario name: lower-case letters, digits and hyphens')
    .describe('The scenario model the surrogate plays (neutral: no task knowledge); default: the one each call recognises')
    .optional(),
  /**
   * The heat-bath spin scenarios' initial condition (ising, potts and their -meanfield variants only). `random`:
   * the hot start (every t = 0 state uniform, then the heat-bath dynamics). `ordered`: the cold start: the
   * t = 0 answers are the same hot draw (the pool whitening is fitted on, so two states stay antipodal and m
   * stays |M| / N), and every update of the first sweep answers the first state (the accepted answer) whatever
   * it reads (asynchronous picks with replacement reach about 1 - 1/e of the agents, the rest keep their t = 0
   * draw: one ordered domain with m about 0.63 for Ising spins, no domain walls to coarsen); the heat-bath
   * dynamics run from there, from sweep 2 on. Absent: `random`, as before the
   * key (optional rather than defaulted, so that earlier corpora keep their fingerprint).
   */
  initial: z
    .enum(['random', 'ordered'])
    .describe(
      'Heat-bath scenarios only: random (hot start, the default) or ordered (cold start: sweep 1 sets every spin to the first state)',
    )
    .optional(),
});

/** Optional price table (any currency, per million tokens): with it, runs report a cost. */
export const priceSchema = z.strictObject({
  prompt_per_mtok: z.number().nonnegative(),
  completion_per_mtok: z.number().nonnegative(),
});

const endpointFields = {
  /**
   * One endpoint or several, balanced by least in-flight. OpenAI-compatible: the API root, e.g.
   * `http://host:8000/v1` (a bare `http://host:8000` gets `/v1`). Anthropic: the origin (a trailing `/v1` is dropped).
   */
  base_url: z.union([httpUrl, z.array(httpUrl).min(1)]),
  model: z.string().min(1),
  /** Environment variable holding the API key (it must then be set). Default: none, the key `EMPTY` (local servers). */
  api_key_env: z.string().optional(),
  /**
   * Most requests open at once per endpoint (default 64); more wait in the client's queue, the deepest event
   * first. Admission keeps fewer open where the server would queue them (its vLLM metrics, or latency).
   */
  max_in_flight: z.int().min(1).default(64),
  /**
   * Timeout of one attempt (default 120000), from when admission sends it to the whole reply read, less the
   * time the server's vLLM metrics report requests waiting in its queue.
   */
  timeout_ms: z.int().min(1).max(MAX_TIMER_MS).default(120_000),
  /** Retries after the first attempt on 429, 408, 409, 5xx, timeouts, resets and malformed replies (default 8). */
  max_retries: z.int().nonnegative().default(8),
  /**
   * Attempts per endpoint in the rolling window of the health check (default 50): once at least
   * min(health_window, 20) are in it and more than max_unusable_share of them gave no usable reply (empty,
   * unparsable, wrong shape) or failed, the sweep stops with one line naming the endpoint and the cause.
   */
  health_window: z.int().min(1).default(50),
  /** Share of unusable or failed attempts in health_window above which the sweep stops (default 0.75). */
  max_unusable_share: z.number().min(0).max(1).default(0.75),
  /** The model's context window; prompts estimated beyond it fail the plan. Default: no check. */
  max_context_tokens: z.int().min(1).optional(),
  /** Default: no price, no cost reported. */
  price: priceSchema.optional(),
  /**
   * Whether the server answers independently of the batch a request lands in (vLLM with
   * VLLM_BATCH_INVARIANT=1): then a rerun of the sweep reproduces its corpus. Recorded in the manifest;
   * default: unknown (null there). It does not change what the engine computes, so it is outside the
   * sweep's fingerprint: a sweep resumes with it added or changed.
   */
  batch_invariant: z.boolean().optional(),
};

export const openaiBackendSchema = z.strictObject({
  kind: z.literal('openai'),
  ...endpointFields,
  /** Which extras the server accepts. Default: probed once per endpoint from `GET /v1/models`, else `openai`. */
  server: z.enum(['vllm', 'llamacpp', 'ollama', 'openai']).optional(),
  /** Qwen3-style thinking, sent to vLLM as `chat_template_kwargs: {enable_thinking}` (default false). */
  thinking: z.boolean().default(false),
  /**
   * The server runs vLLM with `--scheduling-policy priority`: each request carries `priority` = minus its
   * event's depth (vLLM serves lower values first), so chains go before events with little behind them.
   * Default false: an fcfs vLLM answers 400 to a request with a priority.
   */
  priority: z.boolean().optional(),
});

export const anthropicBackendSchema = z.strictObject({
  kind: z.literal('anthropic'),
  ...endpointFields,
  /** Default: the SDK's, https://api.anthropic.com (or ANTHROPIC_BASE_URL). */
  base_url: httpUrl.optional(),
  /**
   * The `anthropic-version` header (default 2023-06-01, the version that accepts a sampling temperature).
   * Versions from 2026-10-21 (the SDK 1.x default) refuse temperature, top_p and top_k with a 400, so with
   * them no temperature is sent: the model samples at its own setting and T is only a label.
   */
  api_version: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date, YYYY-MM-DD')
    .default('2023-06-01'),
});

export const backendSchema = z.discriminatedUnion('kind', [surrogateBackendSchema, openaiBackendSchema, anthropicBackendSchema]);

/** The judge's `max_in_flight` when the spec sets none and no sweep resolves it (a judge spec parsed alone). */
export const JUDGE_IN_FLIGHT_FLOOR = 64;

/**
 * The judge's requests open at once per endpoint when its spec sets none: the sweep's concurrency, at least
 * 64. Every event written asks for a verdict (unless cached), so a judge as fast as the agents has about as
 * many calls open as the sweep has events in flight: a fixed 64 held a 256-slot sweep at 64 verdicts a
 * second against a 1 s judge. A judge slower than the agents needs more: several endpoints, or its own value.
 */
export function judgeInFlight(concurrency: number): number {
  return Math.max(JUDGE_IN_FLIGHT_FLOOR, concurrency);
}

/** Unset (0 after parsing) until resolveJudgeInFlight fills it in with judgeInFlight(concurrency). */
const judgeMaxInFlight = z
  .int()
  .min(1)
  .describe("Requests open at once per endpoint; default: the sweep's concurrency, at least 64")
  .optional()
  .transform((v) => v ?? 0);

/**
 * A judge's backend: an agent backend whose `max_in_flight` follows the sweep unless set (0 stands for unset
 * until resolveJudgeInFlight, in schema.ts, resolves it).
 */
export const judgeBackendSchema = z.discriminatedUnion('kind', [
  surrogateBackendSchema,
  openaiBackendSchema.extend({ max_in_flight: judgeMaxInFlight }),
  anthropicBackendSchema.extend({ max_in_flight: judgeMaxInFlight }),
]);

export type BackendSpec = z.infer<typeof backendSchema>;
export type SurrogateBackendSpec = z.infer<typeof surrogateBackendSchema>;
export type OpenAIBackendSpec = z.infer<typeof openaiBackendSchema>;
export type AnthropicBackendSpec = z.infer<typeof anthropicBackendSchema>;
export type PriceTable = z.infer<typeof priceSchema>;
