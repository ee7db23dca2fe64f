import type { Prompt, Tag } from '@panta/core';

/** Tags an answer with one of the four factual spins. A judge never throws for a bad verdict: it tags it. */
export interface Judge {
  /** `judge_model` column. */
  readonly model: string;
  judge(prompt: Prompt, response: string): Promise<Tag>;
  close(): Promise<void>;
}
