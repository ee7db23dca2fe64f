import type { Prompt, Tag } from '@panta/core';

/** Tags an answer with one of the four factual spins. A judge never throws for a bad verdict: it tags it. */
export interface Judge {
  /** `judge_model` column. */
  readonly model: string;
  judge(prompt: Prompt, response: string): Promise<Tag>;
  /**
   * The same verdict at once, for judges that need no I/O (the reference judge): the collector then writes
   * an event in order without waiting a turn for a promise.
   */
  judgeNow?(prompt: Prompt, response: string): Tag;
  close(): Promise<void>;
}
