import { estimateTokens, type ChatMessages, type ReplyStatus } from '@panta/core';
import type { ChatResult } from './backend.js';
import { MalformedReplyError } from './retry/errors.js';

/** A parsed reply of any provider: usage may be missing (some servers report none). */
export interface ProviderReply {
  text: string;
  finishReason: string;
  promptTokens?: number;
  completionTokens?: number;
}

/**
 * A 2xx reply that arrived but holds no usable text: empty (whitespace only) or unparsable (not JSON, no
 * choices, no text). Retried like any malformed reply; a server answers the same to the same seed, though, so
 * once the retries are spent the reply is recorded as the call's answer ("", with `replyStatus`) instead of
 * failing the call. `reply` keeps what the reply did say (finish reason, usage).
 */
export class UnusableReplyError extends MalformedReplyError {
  override name = 'UnusableReplyError';

  constructor(
    readonly status: Exclude<ReplyStatus, 'ok'>,
    message: string,
    readonly reply: Omit<ProviderReply, 'text'> = { finishReason: 'unknown' },
  ) {
    super(message);
  }
}

/** The reply to record for a failed attempt, when its failure was an unusable reply (else undefined). */
export function recordedReply(cause: unknown): { reply: ProviderReply; status: Exclude<ReplyStatus, 'ok'> } | undefined {
  if (!(cause instanceof UnusableReplyError)) return undefined;
  return { reply: { ...cause.reply, text: '' }, status: cause.status };
}

/**
 * The ChatResult of a reply that took `attempts` calls; usage the server did not report is estimated. Lone
 * surrogates (a reply's JSON may escape them) become U+FFFD here, once, so that the corpus, the prompts that
 * quote the answer and the cluster's transport (UTF-8 everywhere) all hold the same text.
 */
export function chatResult(
  reply: ProviderReply,
  messages: ChatMessages,
  outcome: { attempts: number; latencyMs: number },
  status?: Exclude<ReplyStatus, 'ok'>,
): ChatResult {
  const text = wellFormed(reply.text);
  const result: ChatResult = {
    text,
    finishReason: reply.finishReason,
    promptTokens: reply.promptTokens ?? estimateTokens(messages.system) + estimateTokens(messages.user),
    completionTokens: reply.completionTokens ?? estimateTokens(text),
    calls: outcome.attempts,
    latencyMs: Math.round(outcome.latencyMs),
  };
  if (status) result.replyStatus = status;
  return result;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The text with each lone surrogate replaced by U+FFFD (String.prototype.toWellFormed, Node 20's V8 has it). */
export function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\ufffd') : text;
}
