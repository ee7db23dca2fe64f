export { teamDrift } from './drift.js';
export type { TeamDrift } from './drift.js';
export { factsFound, goldDriftVerdict, goldVerdictOf, scoreAnswer } from './score.js';
export type { TeamScore } from './score.js';
export { readDriftVerdict, teamTurns } from './team-turns.js';
export type { TeamEventRow, TeamTurn } from './team-turns.js';
export { followsInstruction, IFEVAL_CHECKS, ifevalStrict } from './ifeval.js';
export type { IfevalInstruction } from './ifeval.js';
