export * from './task.js';
export * from './execute-event.js';
export * from './in-process-transport.js';
export * from './collector.js';
export * from './executor.js';
export * from './load.js';
export * from './finish.js';
export * from './sweep.js';
