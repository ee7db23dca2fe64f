export * from './whitening.js';
export * from './order-params.js';
