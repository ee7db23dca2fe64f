import type { ChatMessages, GpuCostModel, PromptTemplate, Prompt, SchedulingPolicy, SurrogateBackendSpec } from '@panta/core';
import type { VllmStats } from './vllm-model.js';

/**
 * The Anthropic API has no seed parameter: the anthropic backend sends the event's seed as
 * `metadata.user_id: "seed:<n>"`, and the surrogate server reads it there (and requires it).
 */
export function anthropicSeedUserId(seed: number): string {
  return `seed:${seed}`;
}

/** What anthropicSeedUserId writes. */
export const ANTHROPIC_SEED_USER_ID = /^seed:(-?\d+)$/;

/** The faults the server can inject (docs/DESIGN.md#failure-model). */
export const FAULT_KINDS = ['429', '500', '503', 'timeout', 'reset', 'malformed', 'empty'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface SurrogateServerOptions {
  /** The prompt set the agents know; a prompt is found by its question text. */
  prompts: readonly Prompt[];
  /** The template clients render with (default: core's DEFAULT_TEMPLATE). */
  template?: PromptTemplate;
  /** File named in errors about the template. */
  templateFile?: string;
  /**
   * Further templates clients may render with (a sweep's template arms): a prompt is read back with the
   * first whose rendering it is, `template` first.
   */
  moreTemplates?: readonly { template: PromptTemplate; file?: string }[];
  /** Model id served (default: the surrogate spec's model, `surrogate-potts-v1`). */
  model?: string;
  /** The surrogate's parameters (coupling, field, premise_bias): the same as the in-process backend's. */
  surrogate?: Partial<Omit<SurrogateBackendSpec, 'kind'>>;
  host?: string;
  /** 0 (default): any free port. */
  port?: number;
  /** Fixed time per call (with slots: added outside the batch, like network and queueing overhead). */
  latencyMs?: number;
  /** Continuous batching: at most this many sequences generate at once; more wait FIFO. 0: no batching model. */
  slots?: number;
  /** Continuous batching: time per generated token with one sequence running. */
  tokenMs?: number;
  /** Continuous batching: per-token time is tokenMs * (1 + batchSlowdown * (running - 1)). */
  batchSlowdown?: number;
  faults?: {
    /** Share of generation requests that fail, 0..1. */
    rate: number;
    /** Default: every kind. */
    kinds?: readonly FaultKind[];
    /** Seed of the counter-based fault stream (default 0). */
    seed?: number;
  };
  /** Largest request body accepted, in bytes (default 64 MiB). */
  maxBodyBytes?: number;
  /**
   * A simulated vLLM endpoint (replaces latencyMs and slots): replies after the time the cost model's GPU takes,
   * queued and batched as vLLM's scheduler does (core's VllmEngine); `/metrics` in vLLM's names.
   */
  costModel?: GpuCostModel;
  /** Simulated seconds per wall second (default 1). */
  timeScale?: number;
  /** vLLM's --scheduling-policy: fcfs (default; a nonzero request priority is refused) or priority. */
  schedulingPolicy?: SchedulingPolicy;
}

export interface BatchStats {
  slots: number;
  running: number;
  queued: number;
  maxRunning: number;
  maxQueued: number;
  /** Integral of running sequences over time. */
  busySlotMs: number;
  /** Time with at least one sequence running or queued. */
  activeMs: number;
  /** Sequences finished (not aborted). */
  finished: number;
  /** Sequences dropped because their client went away. */
  aborted: number;
}

export interface ServerStats {
  /** Every HTTP request received. */
  requests: number;
  /** Requests per endpoint: `GET /v1/models`, `POST /v1/chat/completions`, `POST /v1/messages`, `other`. */
  byEndpoint: Record<string, number>;
  /** Faults injected, per kind. */
  faults: Record<FaultKind, number>;
  /** Generation requests answered with a real reply (200, well formed). */
  completed: number;
  /** Requests answered 4xx because they were wrong. */
  badRequests: number;
  /** Requests open now (received, neither answered nor abandoned). */
  open: number;
  /** Most requests open at once. */
  maxConcurrent: number;
  promptTokens: number;
  completionTokens: number;
  /** Present with the continuous batching model. */
  batch?: BatchStats;
  /** Present with a cost model (a simulated vLLM endpoint). */
  vllm?: VllmStats;
}

/** One generation request, whatever the API it came through. */
export interface GenerationRequest {
  model: string;
  messages: ChatMessages;
  seed: number;
  temperature: number;
  /** undefined: no cap. */
  maxTokens?: number;
  /** Generate at least this many tokens (vLLM min_tokens); 0 by default. */
  minTokens: number;
  /** Exactly maxTokens tokens (vLLM min_tokens = max_tokens, or ignore_eos). */
  fixedLength: boolean;
  /** vLLM's request priority (lower first under --scheduling-policy priority); 0 when not sent. */
  priority?: number;
}

export interface GenerationResult {
  text: string;
  finishReason: 'stop' | 'length';
  promptTokens: number;
  completionTokens: number;
}

/** A request the server refuses: the HTTP status and what to say. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}
