export * from './encoder.js';
export * from './hashing.js';
export * from './create.js';
