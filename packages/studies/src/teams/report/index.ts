import { section, type Table } from '@panta/report';
import { withDepartures } from '../../departures.js';
import { teamArmTestTable } from './arm-tests.js';
import { loadTeams, type TeamRow } from './data.js';
import { teamDepartures } from './departures.js';
import { beliefFigure, driftFigure, focusFigure, propagationFigure } from './figures.js';
import { driftTableTeams, judgeTable, propagationTable, teamCostTable } from './tables.js';

/** What the team section reads: teams.parquet's rows and the departures from the papers the corpus used. */
interface TeamSource {
  rows: TeamRow[];
  departures: string[];
}

/**
 * The team studies' report section (relay, hub and debate schedules, docs/teams.md), from teams.parquet:
 * lost in propagation and belief injection by arm, FOCUS and drift by turn, the DRIFTJudge's detection,
 * cost per arm, each arm tested against the plain team; each table's caption names the departures from the
 * paper the corpus used (teamDepartures). Registered with report's registerSection by packages/studies/src/report.ts.
 */
export const teamsSection = section<TeamSource>({
  name: 'teams',
  load: async (data, dir) => {
    const rows = await loadTeams(dir);
    return rows === null ? null : { rows, departures: teamDepartures(rows, data.manifest.spec) };
  },
  figures: [
    { ids: ['team-lost-in-propagation'], make: (s) => propagationFigure(s.rows) },
    { ids: ['team-belief-injection'], make: (s) => beliefFigure(s.rows) },
    { ids: ['team-focus'], make: (s) => focusFigure(s.rows) },
    { ids: ['team-drift'], make: (s) => driftFigure(s.rows) },
  ],
  tables: [
    { ids: ['team-answers'], make: (s) => tagged(propagationTable(s.rows), s) },
    { ids: ['team-drift-by-arm'], make: (s) => tagged(driftTableTeams(s.rows), s) },
    { ids: ['team-driftjudge'], make: (s) => tagged(judgeTable(s.rows), s) },
    { ids: ['team-cost'], make: (s) => tagged(teamCostTable(s.rows), s) },
    { ids: ['team-arm-tests'], make: (s) => tagged(teamArmTestTable(s.rows), s) },
  ],
});

function tagged(table: Table | null, s: TeamSource): Table | null {
  return table === null ? null : withDepartures(table, s.departures);
}
