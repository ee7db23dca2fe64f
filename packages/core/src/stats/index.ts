export { cohenKappa } from './kappa.js';
export type { Agreement } from './kappa.js';
export { stratifiedSample } from './stratified-sample.js';
export type { SampleItem, StratifiedSample } from './stratified-sample.js';
