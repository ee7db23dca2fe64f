import type { ChatMessages, PromptContext, ReplyStatus } from '@panta/core';

/** One completion request: the rendered messages plus everything a reproducible call needs. */
export interface ChatRequest {
  /** Renders the messages (once): backends that send text call it. */
  messages(): ChatMessages;
  /** Lengths of the rendered messages, without rendering them (for backends that only count). */
  promptLength(): { system: number; user: number };
  /** The event's seed, sent to servers that accept one; the same on every retry. */
  seed: number;
  temperature: number;
  maxTokens: number;
  fixedLength: boolean;
  /**
   * The structured view the messages were rendered from, for an agent's prompt. Backends that simulate an
   * agent (the surrogate) read it instead of parsing text; real backends ignore it. Absent for other
   * prompts (the LLM judge's rubric).
   */
  context?: PromptContext;
  /**
   * The event's depth: how long a chain of calls is still behind it (its run's events left over its width,
   * or its bottom level). Deeper calls are let in first, and sent with vLLM's `priority` where the backend
   * says the server schedules by it. Absent: 0.
   */
  depth?: number;
}

export interface ChatResult {
  text: string;
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
  /** Calls made for this result, retries included. */
  calls: number;
  /** Absent when the reply had text; else why its text is "" (a reply recorded after its retries). */
  replyStatus?: Exclude<ReplyStatus, 'ok'>;
  /** Duration of the call that produced the result, ms (real backends; excludes queueing and failed attempts). */
  latencyMs?: number;
}

/** Every LLM backend (surrogate, OpenAI-compatible, Anthropic) is one of these. */
export interface LlmBackend {
  /** `backend` column: surrogate | openai | anthropic. */
  readonly kind: string;
  /** `model` column. */
  readonly model: string;
  complete(request: ChatRequest): Promise<ChatResult>;
  /** Real backends: attempts open now and the oldest one's age in ms (progress while calls hang). */
  openAttempts?(): { count: number; oldestMs: number };
  close(): Promise<void>;
}
