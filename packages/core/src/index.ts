export * from './rng.js';
export * from './event.js';
