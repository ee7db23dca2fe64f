import type { Study } from '../study.js';
import { travelJudgeCalls } from './judge-calls.js';
import { travel as scenario } from './surrogate/index.js';
import { travelJudgeTable } from './judge-consistency.js';
import { travelTable } from './table.js';

/**
 * The travel experiment: a briefed travel-planning team run under ssvp and its arms (docs/travel.md). Its
 * surrogate scenario plays a team whose task names the destination and whose roles' briefings may mislead;
 * its table, travel.parquet, holds each run's hallucination rate, task consistency and detection.
 */
export const travel: Study = {
  name: 'travel',
  scenario,
  scenarioImplied: true,
  tables: [travelTable, travelJudgeTable],
  judgeCalls: [travelJudgeCalls],
};
