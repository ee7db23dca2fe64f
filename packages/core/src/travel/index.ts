export { BRIEFING_LINE, briefingOf, withBriefing } from './briefing.js';
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
