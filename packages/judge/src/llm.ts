import { mixSeed, parseVerdict, rubric, type Prompt, type Tag } from '@panta/core';
import type { LlmBackend } from '@panta/llm';
import type { Judge } from './judge.js';
import { VerdictCache } from './verdict-cache.js';

/** Counts of what the judge did, for runs.parquet and the manifest. */
export interface JudgeStats {
  calls: number;
  cached: number;
  failures: number;
}

/**
 * The LLM judge: the fixed rubric sent to an OpenAI-compatible or Anthropic model at temperature 0, the
 * verdict parsed robustly; a failed call or an unparsable verdict is tagged judge_failure, never dropped.
 * Concurrent requests for the same pair share one call.
 */
export class LlmJudge implements Judge {
  readonly model: string;
  readonly stats: JudgeStats = { calls: 0, cached: 0, failures: 0 };
  private readonly inflight = new Map<string, Promise<Tag>>();

  constructor(
    private readonly backend: LlmBackend,
    private readonly cache: VerdictCache = new VerdictCache(),
  ) {
    this.model = `${backend.kind}:${backend.model}`;
  }

  async judge(prompt: Prompt, response: string): Promise<Tag> {
    const key = VerdictCache.key(prompt.id, response);
    const known = this.cache.get(key);
    if (known) {
      this.stats.cached++;
      return known;
    }
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.ask(prompt, response, key).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    } else this.stats.cached++;
    return pending;
  }

  private async ask(prompt: Prompt, response: string, key: string): Promise<Tag> {
    const messages = rubric(prompt, response);
    this.stats.calls++;
    let tag: Tag;
    try {
      const result = await this.backend.complete({
        messages: () => messages,
        promptLength: () => ({ system: messages.system.length, user: messages.user.length }),
        seed: mixSeed('judge', key) >>> 1,
        temperature: 0,
        maxTokens: 32,
        fixedLength: false,
      });
      tag = parseVerdict(result.text) ?? 'judge_failure';
    } catch {
      tag = 'judge_failure';
    }
    if (tag === 'judge_failure') this.stats.failures++;
    this.cache.set(key, tag);
    return tag;
  }

  async close(): Promise<void> {
    await this.backend.close();
  }
}
