import type { ChatMessages } from '@panta/core';
import { RequestError, type GenerationRequest, type GenerationResult } from './types.js';
import { checkModel, object, optionalBoolean, optionalInt, optionalNumber, requiredString, textContent } from './validate.js';

/**
 * POST /v1/chat/completions, the OpenAI chat format as vLLM serves it. Accepted: messages [system, user]
 * (system or developer messages first, then one user message), temperature, top_p, max_tokens (or
 * max_completion_tokens), seed (required: the surrogate is a pure function of it), n = 1, stream false, and
 * the vLLM extras min_tokens, top_k, ignore_eos, chat_template_kwargs, priority. Fixed length: ignore_eos, or
 * min_tokens >= max_tokens. Other fields are ignored, as vLLM does.
 */
export function parseChatCompletion(value: unknown, served: string): GenerationRequest {
  const body = object(value, 'body');
  const model = requiredString(body, 'model');
  if (body.stream !== undefined && body.stream !== null && body.stream !== false) {
    throw new RequestError(400, 'stream: only stream: false is served by the surrogate', 'stream');
  }
  const n = optionalInt(body, 'n', 1);
  if (n !== undefined && n !== 1) throw new RequestError(400, `n: only n = 1 is served, got ${n}`, 'n');
  const temperature = optionalNumber(body, 'temperature', 0, 2) ?? 1;
  optionalNumber(body, 'top_p', 0, 1);
  optionalInt(body, 'top_k', -1);
  const maxTokens = optionalInt(body, 'max_completion_tokens', 1) ?? optionalInt(body, 'max_tokens', 1);
  const minTokens = optionalInt(body, 'min_tokens', 0) ?? 0;
  const ignoreEos = optionalBoolean(body, 'ignore_eos') ?? false;
  if (body.chat_template_kwargs !== undefined && body.chat_template_kwargs !== null)
    object(body.chat_template_kwargs, 'chat_template_kwargs');
  const priority = optionalInt(body, 'priority', Number.MIN_SAFE_INTEGER) ?? 0;
  const seed = optionalInt(body, 'seed', Number.MIN_SAFE_INTEGER);
  if (seed === undefined) throw new RequestError(400, "seed: required (the surrogate's reply is a pure function of the seed)", 'seed');
  if (maxTokens !== undefined && minTokens > maxTokens)
    throw new RequestError(400, `min_tokens: ${minTokens} exceeds max_tokens ${maxTokens}`, 'min_tokens');
  checkModel(model, served);
  return {
    model,
    messages: chatMessages(body.messages),
    seed,
    temperature,
    maxTokens,
    minTokens,
    fixedLength: ignoreEos || (maxTokens !== undefined && minTokens >= maxTokens),
    priority,
  };
}

function chatMessages(value: unknown): ChatMessages {
  if (!Array.isArray(value) || value.length === 0) throw new RequestError(400, 'messages: required, a non-empty array', 'messages');
  let system = '';
  let user: string | undefined;
  for (let i = 0; i < value.length; i++) {
    const m = object(value[i], `messages[${i}]`);
    const role = m.role;
    if ((role === 'system' || role === 'developer') && user === undefined) {
      system += textContent(m.content, `messages[${i}].content`);
    } else if (role === 'user' && user === undefined) {
      user = textContent(m.content, `messages[${i}].content`);
    } else {
      throw new RequestError(
        400,
        `messages[${i}]: the surrogate answers [system, user] conversations, got role ${JSON.stringify(role)} here`,
        'messages',
      );
    }
  }
  if (user === undefined) throw new RequestError(400, 'messages: no user message', 'messages');
  return { system, user };
}

let ids = 0;

export function chatCompletionBody(result: GenerationResult, model: string, empty = false): Record<string, unknown> {
  return {
    id: `chatcmpl-surrogate-${(++ids).toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: empty
      ? []
      : [{ index: 0, message: { role: 'assistant', content: result.text }, logprobs: null, finish_reason: result.finishReason }],
    usage: {
      prompt_tokens: result.promptTokens,
      completion_tokens: result.completionTokens,
      total_tokens: result.promptTokens + result.completionTokens,
    },
  };
}

const OPENAI_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'server_error',
  503: 'service_unavailable',
};

/** OpenAI's error shape. */
export function openaiError(status: number, message: string, param?: string): Record<string, unknown> {
  return { error: { message, type: OPENAI_TYPE[status] ?? 'server_error', param: param ?? null, code: null } };
}
