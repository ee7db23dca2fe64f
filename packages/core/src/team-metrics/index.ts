export { costPerArm } from './cost.js';
export type { ArmCost, TeamCall } from './cost.js';
export { detection } from './detection.js';
export type { Detection, JudgedTurn, Rate } from './detection.js';
export { teamDrift } from './drift.js';
export type { TeamDrift } from './drift.js';
export { factsFound, scoreAnswer } from './score.js';
export type { TeamScore } from './score.js';
