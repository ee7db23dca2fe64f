export * from './judge.js';
export * from './reference.js';
export * from './create.js';
