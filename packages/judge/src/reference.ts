import { classifyAnswer, type Prompt, type Tag } from '@panta/core';
import type { Judge } from './judge.js';

/** Accepted answers make it correct, known false answers hallucinated, anything else not known. */
export class ReferenceJudge implements Judge {
  readonly model = 'reference';
  /**
   * Tags already given, per prompt: a population repeats a handful of replies, and matching one (Unicode
   * normalisation and three regexes) cost more than the rest of judging an event. Bounded like the
   * surrogate's read cache.
   */
  private readonly memo = new WeakMap<Prompt, Map<string, Tag>>();

  tag(prompt: Prompt, response: string): Tag {
    let seen = this.memo.get(prompt);
    if (!seen) this.memo.set(prompt, (seen = new Map()));
    let tag = seen.get(response);
    if (tag === undefined) {
      const c = classifyAnswer(prompt, response);
      tag = c.kind === 'correct' ? 'correct' : c.kind === 'false' ? 'hallucinated' : 'not_known';
      if (seen.size >= 100_000) seen.clear();
      seen.set(response, tag);
    }
    return tag;
  }

  async judge(prompt: Prompt, response: string): Promise<Tag> {
    return this.tag(prompt, response);
  }

  judgeNow(prompt: Prompt, response: string): Tag {
    return this.tag(prompt, response);
  }

  async close(): Promise<void> {}
}
