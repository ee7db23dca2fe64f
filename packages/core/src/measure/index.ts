export { CovarianceAccumulator, fitWhitening, toSpin } from './whitening.js';
export type { Whitening } from './whitening.js';
export { driftStats, driftTolerance, focusSeries, measureSnapshot, snapshotAccuracy, unitVector } from './order-params.js';
export { symmetricEigen } from './symmetric-eigen.js';
