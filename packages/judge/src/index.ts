export type { Judge } from './judge.js';
export { ReferenceJudge } from './reference.js';
export { VerdictCache } from './verdict-cache.js';
export { LlmJudge } from './llm.js';
export { createJudge } from './create.js';
