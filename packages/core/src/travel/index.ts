export { BRIEFING_LINE, BROADCAST_LINE, briefingsOf, withBriefing, withBroadcast } from './briefing.js';
export {
  assertionVerdicts,
  countAssertions,
  detectionStep,
  hallucinationRate,
  recoverySteps,
  type AssertionCounts,
  type AssertionVerdict,
  type Assertions,
} from './measures.js';
export { referenceTcs, TCS_DIMENSIONS, travelRunMeasures, type TravelEventRow, type TravelRunMeasures } from './run-measures.js';
