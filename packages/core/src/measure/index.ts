export * from './whitening.js';
export * from './order-params.js';
export * from './symmetric-eigen.js';
