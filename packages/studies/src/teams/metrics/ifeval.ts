/**
 * IFEval's strict accuracy lives in core (team-metrics/ifeval.ts), beside scoreAnswer, which scores a debate's
 * solution by it on a prompt with `instructions` (datasets/ifeval.jsonl); re-exported here for the study.
 */
export { followsInstruction, IFEVAL_CHECKS, type IfevalInstruction, ifevalStrict } from '@panta/core';
