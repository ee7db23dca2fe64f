export { integratedAutocorrelationTime } from './autocorrelation.js';
export { BOOTSTRAP_RESAMPLES, bootstrapOverTrials } from './bootstrap.js';
export type { BootstrapInterval } from './bootstrap.js';
export { graphDistances, secondMomentLength, SpatialCorrelation } from './correlation.js';
export { binderCumulant, factualSpin, pooledMoment, susceptibility } from './moments.js';
export {
  checkPlateau,
  checkTrials,
  chiSquarePerDofBound,
  halvesDisagree,
  plateauOf,
  plateauStart,
  trialsBound,
  TRIALS_SLACK,
  Z_EQUILIBRATION,
} from './plateau.js';
export type { PlateauCheck, TrialsCheck } from './plateau.js';
export { CROSSING_RESAMPLES, curveCrossings, curveExtremum, FIT_POINTS, fittedCrossing, parabolaVertex, Z95 } from './scaling.js';
export type { CurvePoint, Located } from './scaling.js';
export { formatEstimate, formatTemperature, phaseDiagram, settledFor } from './diagram.js';
export type { Estimate, PhaseFamily, PhasePoint } from './diagram.js';
