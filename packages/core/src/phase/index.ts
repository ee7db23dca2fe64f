export { integratedAutocorrelationTime } from './autocorrelation.js';
export { BOOTSTRAP_RESAMPLES, bootstrapOverTrials } from './bootstrap.js';
export type { BootstrapInterval } from './bootstrap.js';
export { graphDistances, secondMomentLength, SpatialCorrelation } from './correlation.js';
export { binderCumulant, factualSpin, pooledMoment, susceptibility } from './moments.js';
export { checkPlateau, plateauOf, plateauStart, Z_EQUILIBRATION } from './plateau.js';
export type { PlateauCheck } from './plateau.js';
export { curveCrossings, curveExtremum, parabolaVertex, Z95 } from './scaling.js';
export type { CurvePoint, Located } from './scaling.js';
