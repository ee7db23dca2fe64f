import { estimateTokens, type ChatMessages } from '@panta/core';
import type { ChatResult } from './backend.js';

/** A parsed reply of any provider: usage may be missing (some servers report none). */
export interface ProviderReply {
  text: string;
  finishReason: string;
  promptTokens?: number;
  completionTokens?: number;
}

/** The ChatResult of a reply that took `attempts` calls; usage the server did not report is estimated. */
export function chatResult(reply: ProviderReply, messages: ChatMessages, outcome: { attempts: number; latencyMs: number }): ChatResult {
  return {
    text: reply.text,
    finishReason: reply.finishReason,
    promptTokens: reply.promptTokens ?? estimateTokens(messages.system) + estimateTokens(messages.user),
    completionTokens: reply.completionTokens ?? estimateTokens(reply.text),
    calls: outcome.attempts,
    latencyMs: Math.round(outcome.latencyMs),
  };
}
