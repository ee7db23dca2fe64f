import { section } from '@panta/report';
import { teamArmTestTable } from './arm-tests.js';
import { loadTeams } from './data.js';
import { beliefFigure, driftFigure, focusFigure, propagationFigure } from './figures.js';
import { driftTableTeams, judgeTable, propagationTable, teamCostTable } from './tables.js';

/**
 * The team studies' report section (relay, hub and debate schedules, docs/teams.md), from teams.parquet:
 * lost in propagation and belief injection by arm, FOCUS and drift by turn, the DRIFTJudge's detection,
 * cost per arm, each arm tested against the plain team. Registered with report's registerSection by packages/studies/src/report.ts.
 */
export const teamsSection = section({
  name: 'teams',
  load: (_data, dir) => loadTeams(dir),
  figures: [
    { ids: ['team-lost-in-propagation'], make: (rows) => propagationFigure(rows) },
    { ids: ['team-belief-injection'], make: (rows) => beliefFigure(rows) },
    { ids: ['team-focus'], make: (rows) => focusFigure(rows) },
    { ids: ['team-drift'], make: (rows) => driftFigure(rows) },
  ],
  tables: [
    { ids: ['team-answers'], make: (rows) => propagationTable(rows) },
    { ids: ['team-drift-by-arm'], make: (rows) => driftTableTeams(rows) },
    { ids: ['team-driftjudge'], make: (rows) => judgeTable(rows) },
    { ids: ['team-cost'], make: (rows) => teamCostTable(rows) },
    { ids: ['team-arm-tests'], make: (rows) => teamArmTestTable(rows) },
  ],
});
