export { cohenKappa } from './kappa.js';
export type { Agreement } from './kappa.js';
export { raterPairs } from './rater-pairs.js';
export type { PairAgreement, RatedItem } from './rater-pairs.js';
export { stratifiedSample } from './stratified-sample.js';
export type { SamplePick, StratifiedSample, Stratum } from './stratified-sample.js';
