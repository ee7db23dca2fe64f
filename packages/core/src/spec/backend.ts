import { z } from 'zod';

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
  /** Simulated call latency, for benchmarks of the executor (0: answer at once). */
  latency_ms: z.number().nonnegative().default(0),
});

const endpointFields = {
  /** One endpoint or several, balanced by least in-flight. */
  base_url: z.union([z.url(), z.array(z.url()).min(1)]),
  model: z.string().min(1),
  api_key_env: z.string().optional(),
  max_in_flight: z.int().positive().default(64),
  timeout_ms: z.int().positive().default(120_000),
  max_retries: z.int().nonnegative().default(8),
  max_context_tokens: z.int().positive().optional(),
};

export const openaiBackendSchema = z.strictObject({
  kind: z.literal('openai'),
  ...endpointFields,
  server: z.enum(['vllm', 'llamacpp', 'ollama', 'openai']).optional(),
});

export const anthropicBackendSchema = z.strictObject({
  kind: z.literal('anthropic'),
  ...endpointFields,
  base_url: z.url().optional(),
});

export const backendSchema = z.discriminatedUnion('kind', [
  surrogateBackendSchema,
  openaiBackendSchema,
  anthropicBackendSchema,
]);

export type BackendSpec = z.infer<typeof backendSchema>;
export type SurrogateBackendSpec = z.infer<typeof surrogateBackendSchema>;
