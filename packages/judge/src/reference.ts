import { classifyAnswer, type Prompt, type Tag } from '@panta/core';
import type { Judge } from './judge.js';

/** Accepted answers make it correct, known false answers hallucinated, anything else not known. */
export class ReferenceJudge implements Judge {
  readonly model = 'reference';

  tag(prompt: Prompt, response: string): Tag {
    const c = classifyAnswer(prompt, response);
    return c.kind === 'correct' ? 'correct' : c.kind === 'false' ? 'hallucinated' : 'not_known';
  }

  async judge(prompt: Prompt, response: string): Promise<Tag> {
    return this.tag(prompt, response);
  }

  async close(): Promise<void> {}
}
