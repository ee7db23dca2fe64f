export * from './judge.js';
export * from './reference.js';
export * from './verdict-cache.js';
export * from './llm.js';
export * from './create.js';
