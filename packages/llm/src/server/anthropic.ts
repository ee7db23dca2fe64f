import type { ChatMessages } from '@panta/core';
import { ANTHROPIC_SEED_USER_ID, RequestError, type GenerationRequest, type GenerationResult } from './types.js';
import { checkModel, object, optionalNumber, optionalInt, requiredString, textContent } from './validate.js';

/**
 * POST /v1/messages, the Anthropic Messages format: system (a string or text blocks), messages [one user
 * message], max_tokens (required), temperature (0..1, as the Anthropic API allows), top_p, top_k,
 * stop_sequences (accepted, unused), stream false. The Anthropic API has no seed: the seed is carried in
 * `metadata.user_id` as `seed:<n>` (the anthropic backend sends it that way), and is required here.
 */
export function parseMessages(value: unknown, served: string): GenerationRequest {
  const body = object(value, 'body');
  const model = requiredString(body, 'model');
  if (body.stream !== undefined && body.stream !== null && body.stream !== false) {
    throw new RequestError(400, 'stream: only stream: false is served by the surrogate', 'stream');
  }
  const maxTokens = optionalInt(body, 'max_tokens', 1);
  if (maxTokens === undefined) throw new RequestError(400, 'max_tokens: Field required', 'max_tokens');
  const temperature = optionalNumber(body, 'temperature', 0, 1) ?? 1;
  optionalNumber(body, 'top_p', 0, 1);
  optionalInt(body, 'top_k', 0);
  const metadata = body.metadata === undefined || body.metadata === null ? {} : object(body.metadata, 'metadata');
  const match = typeof metadata.user_id === 'string' ? ANTHROPIC_SEED_USER_ID.exec(metadata.user_id) : null;
  if (!match || !Number.isSafeInteger(Number(match[1]))) {
    throw new RequestError(
      400,
      'metadata.user_id: required as "seed:<n>" (the Anthropic API has no seed parameter; the surrogate reads it there)',
      'metadata.user_id',
    );
  }
  checkModel(model, served);
  return { model, messages: messages(body), seed: Number(match[1]), temperature, maxTokens, minTokens: 0, fixedLength: false };
}

function messages(body: Record<string, unknown>): ChatMessages {
  const system = body.system === undefined || body.system === null ? '' : textContent(body.system, 'system');
  const list = body.messages;
  if (!Array.isArray(list) || list.length !== 1) {
    throw new RequestError(400, 'messages: the surrogate answers exactly one user message', 'messages');
  }
  const m = object(list[0], 'messages[0]');
  if (m.role !== 'user') throw new RequestError(400, `messages[0].role: expected "user", got ${JSON.stringify(m.role)}`, 'messages');
  return { system, user: textContent(m.content, 'messages[0].content') };
}

let ids = 0;

export function messageBody(result: GenerationResult, model: string, empty = false): Record<string, unknown> {
  return {
    id: `msg_surrogate_${(++ids).toString(36)}`,
    type: 'message',
    role: 'assistant',
    model,
    content: empty ? [] : [{ type: 'text', text: result.text }],
    stop_reason: result.finishReason === 'length' ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: result.promptTokens, output_tokens: result.completionTokens },
  };
}

const ANTHROPIC_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'overloaded_error',
};

/** Anthropic's error shape. */
export function anthropicError(status: number, message: string): Record<string, unknown> {
  return { type: 'error', error: { type: ANTHROPIC_TYPE[status] ?? 'api_error', message } };
}
