export * from './backend.js';
export * from './surrogate/agent.js';
export * from './surrogate/backend.js';
export * from './surrogate/phrasing.js';
export * from './create.js';
