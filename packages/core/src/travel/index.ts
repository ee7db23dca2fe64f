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
export { meanOf, type TravelJudge, type TravelJudgement, type TravelJudgeRequest } from './judged.js';
export {
  ASSERTION_RUBRIC_VERDICTS,
  assertionReplyText,
  parseAssertionReply,
  parseTcsReply,
  parseTravelRubric,
  TRAVEL_ASSERTIONS_SYSTEM,
  TRAVEL_TCS_SYSTEM,
  TRAVEL_VERDICT_MAX_TOKENS,
  tcsReplyText,
  travelRubric,
  travelVerdictKey,
  type AssertionRubricVerdict,
  type TravelRubricKind,
} from './rubric.js';
export {
  referenceTcs,
  type RunJudgement,
  TCS_DIMENSIONS,
  travelRunMeasures,
  type TravelEventRow,
  type TravelRunMeasures,
} from './run-measures.js';
