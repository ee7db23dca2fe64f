import { JUDGE_IN_FLIGHT_FLOOR, type JudgeSpec, type Prompt } from '@panta/core';
import { judgeCachePath } from '@panta/corpus';
import { createBackend } from '@panta/llm';
import type { Judge } from './judge.js';
import { LlmJudge } from './llm.js';
import { ReferenceJudge } from './reference.js';
import { VerdictCache } from './verdict-cache.js';
import { TieredVerdicts, type VerdictStore } from './verdict-store.js';

export interface CreateJudgeOptions {
  /** Verdicts shared by every process of a sweep (Redis in the distributed mode), behind the process's own. */
  shared?: VerdictStore;
  /** The LLM judge's own verdict file, instead of the sweep's in `out` (a post-hoc judge keeps its own). */
  cacheFile?: string;
}

/**
 * The judge a spec names. An LLM judge keeps its verdicts in the corpus folder `out` when given one (so a
 * resumed sweep pays for none again), and in `options.shared` too when given one.
 */
export function createJudge(
  spec: JudgeSpec,
  file: string,
  prompts: readonly Prompt[],
  out?: string,
  options: CreateJudgeOptions = {},
): Judge {
  switch (spec.kind) {
    case 'reference':
      return new ReferenceJudge();
    case 'llm': {
      // A judge spec parsed outside a sweep leaves max_in_flight unset (0): today's fixed default then.
      const backend =
        spec.backend.kind !== 'surrogate' && spec.backend.max_in_flight === 0
          ? { ...spec.backend, max_in_flight: JUDGE_IN_FLIGHT_FLOOR }
          : spec.backend;
      const own = new VerdictCache(options.cacheFile ?? (out ? judgeCachePath(out) : undefined));
      return new LlmJudge(createBackend(backend, prompts, file), options.shared ? new TieredVerdicts(own, options.shared) : own);
    }
  }
}
