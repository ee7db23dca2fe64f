import type { ChatMessages } from '@panta/core';
import type { ServerKind } from './probe.js';

export interface SamplingRequest {
  seed: number;
  temperature: number;
  maxTokens: number;
  fixedLength: boolean;
  /** vLLM's `priority` (lower is served sooner), sent only when set (`backend.priority`). */
  priority?: number;
}

/**
 * The `/v1/chat/completions` body for one event. Every server gets the standard fields with explicit values
 * (model, the system and user messages, temperature T, top_p 1, max_tokens, the event's seed), since vLLM
 * otherwise applies the model's generation_config. Per server, the extras it accepts:
 *
 * - `vllm`: `top_k: -1` (off), `min_p: 0`, `repetition_penalty: 1` (also generation_config fields),
 *   `chat_template_kwargs: {enable_thinking}`; with fixed length, `min_tokens = max_tokens` and `ignore_eos`.
 * - `llamacpp`: `top_k: -1` (off), `min_p: 0` (its default is 0.05), `repeat_penalty: 1`; with fixed length,
 *   `ignore_eos` (llama.cpp has no min_tokens).
 * - `ollama`, `openai`: standard fields only; fixed length cannot be asked for there.
 *
 * With `backend.priority` (a vLLM run with `--scheduling-policy priority`), `priority`: minus the event's depth.
 *
 * The body depends only on the request and the server kind, so every retry sends the same bytes.
 */
export function buildChatBody(
  model: string,
  messages: ChatMessages,
  req: SamplingRequest,
  server: ServerKind,
  thinking: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    messages: [
      { role: 'system', content: messages.system },
      { role: 'user', content: messages.user },
    ],
    temperature: req.temperature,
    top_p: 1,
    max_tokens: req.maxTokens,
    seed: req.seed,
  };
  if (req.priority !== undefined) body.priority = req.priority;
  if (server === 'vllm') {
    body.top_k = -1;
    body.min_p = 0;
    body.repetition_penalty = 1;
    body.chat_template_kwargs = { enable_thinking: thinking };
    if (req.fixedLength) {
      body.min_tokens = req.maxTokens;
      body.ignore_eos = true;
    }
  } else if (server === 'llamacpp') {
    body.top_k = -1;
    body.min_p = 0;
    body.repeat_penalty = 1;
    if (req.fixedLength) body.ignore_eos = true;
  }
  return body;
}
