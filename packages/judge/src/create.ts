import type { JudgeSpec, Prompt } from '@panta/core';
import { judgeCachePath } from '@panta/corpus';
import { createBackend } from '@panta/llm';
import type { Judge } from './judge.js';
import { LlmJudge } from './llm.js';
import { ReferenceJudge } from './reference.js';
import { VerdictCache } from './verdict-cache.js';

/** The judge a spec names; an LLM judge keeps its verdict cache in the corpus folder `out`. */
export function createJudge(spec: JudgeSpec, file: string, prompts: readonly Prompt[], out?: string): Judge {
  switch (spec.kind) {
    case 'reference':
      return new ReferenceJudge();
    case 'llm':
      return new LlmJudge(createBackend(spec.backend, prompts, file), new VerdictCache(out ? judgeCachePath(out) : undefined));
  }
}
