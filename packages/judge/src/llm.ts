import { type ChatMessages, mixSeed, parseVerdict, rubric, VERDICT_MAX_TOKENS, type Prompt, type Tag } from '@panta/core';
import { type LlmBackend, unhealthyCause } from '@panta/llm';
import type { Judge } from './judge.js';
import { VerdictCache } from './verdict-cache.js';
import type { VerdictStore } from './verdict-store.js';

/** Counts of what the judge did, for runs.parquet and the manifest. */
export interface JudgeStats {
  /** Calls to the judge's model. */
  calls: number;
  /** Verdicts given without a call of their own: from the store (this process's or the shared one) or a call already open. */
  cached: number;
  failures: number;
}

/**
 * The LLM judge: the fixed rubric sent to an OpenAI-compatible or Anthropic model at temperature 0, the
 * verdict parsed robustly; a failed call or an unparsable verdict is tagged judge_failure, never dropped
 * and never stored. Concurrent requests for the same pair in one process share one call; pairs judged by
 * other processes of the sweep come from a shared store when there is one.
 */
export class LlmJudge implements Judge {
  readonly model: string;
  readonly stats: JudgeStats = { calls: 0, cached: 0, failures: 0 };
  private readonly inflight = new Map<string, Promise<Tag>>();

  constructor(
    private readonly backend: LlmBackend,
    private readonly store: VerdictStore = new VerdictCache(),
  ) {
    this.model = `${backend.kind}:${backend.model}`;
  }

  judge(prompt: Prompt, response: string): Promise<Tag> {
    const key = VerdictCache.key(prompt.id, response);
    let pending = this.inflight.get(key);
    if (pending) {
      this.stats.cached++;
      return pending;
    }
    const known = this.store.get(key);
    if (typeof known === 'string') {
      this.stats.cached++;
      return Promise.resolve(known);
    }
    pending = this.lookUp(prompt, response, key, known).finally(() => this.inflight.delete(key));
    this.inflight.set(key, pending);
    return pending;
  }

  /** A verdict the store must fetch (another process may have given it), else the model's. */
  private async lookUp(prompt: Prompt, response: string, key: string, known: Promise<Tag | undefined> | undefined): Promise<Tag> {
    // A shared store that cannot answer costs a call, never a verdict.
    const stored = known && (await known.catch(() => undefined));
    if (stored) {
      this.stats.cached++;
      return stored;
    }
    const tag = await this.ask(prompt, response, key);
    if (tag === 'judge_failure') this.stats.failures++;
    else {
      try {
        await this.store.set(key, tag);
      } catch {
        // not stored: a later encounter elsewhere asks again, and this verdict stands
      }
    }
    return tag;
  }

  private async ask(prompt: Prompt, response: string, key: string): Promise<Tag> {
    const messages = rubric(prompt, response);
    this.stats.calls++;
    try {
      const result = await this.backend.complete({
        messages: () => messages,
        promptLength: () => ({ system: messages.system.length, user: messages.user.length }),
        seed: mixSeed('judge', key) >>> 1,
        temperature: 0,
        maxTokens: VERDICT_MAX_TOKENS,
        fixedLength: false,
      });
      return parseVerdict(result.text) ?? 'judge_failure';
    } catch (e) {
      // A judge whose endpoint cannot answer (its health breaker tripped) stops the pass: tagging every
      // answer judge_failure would make a corpus that says it is judged.
      if (unhealthyCause(e)) throw e;
      return 'judge_failure';
    }
  }

  /**
   * A reply to another rubric (one a study's table asks): the verdict store's reply for `key`
   * when it has one, else the model's at temperature 0. A reply `accept` refuses, or a failed call, is null
   * (a judge failure, counted, never stored); an accepted one is stored as its text. The store types its
   * values as tags: a stored reply is a JSON text that no factual lookup asks for (its key has another form).
   */
  async rubricReply(key: string, messages: ChatMessages, maxTokens: number, accept: (text: string) => boolean): Promise<string | null> {
    const known = await Promise.resolve(this.store.get(key)).catch(() => undefined);
    if (typeof known === 'string' && accept(known)) {
      this.stats.cached++;
      return known;
    }
    this.stats.calls++;
    let text: string | null = null;
    try {
      const result = await this.backend.complete({
        messages: () => messages,
        promptLength: () => ({ system: messages.system.length, user: messages.user.length }),
        seed: mixSeed('judge', key) >>> 1,
        temperature: 0,
        maxTokens,
        fixedLength: false,
      });
      text = accept(result.text) ? result.text : null;
    } catch (e) {
      if (unhealthyCause(e)) throw e;
      text = null;
    }
    if (text === null) {
      this.stats.failures++;
      return null;
    }
    try {
      await this.store.set(key, text as Tag);
    } catch {
      // not stored: verify then counts it a failure, and a resumed finish asks again
    }
    return text;
  }

  async close(): Promise<void> {
    await this.store.close?.();
    await this.backend.close();
  }
}
