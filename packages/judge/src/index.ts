export type { Judge } from './judge.js';
export { ReferenceJudge } from './reference.js';
export { VerdictCache } from './verdict-cache.js';
export { TieredVerdicts, type VerdictStore } from './verdict-store.js';
export { LlmJudge, type JudgeStats } from './llm.js';
export { createJudge, type CreateJudgeOptions } from './create.js';
