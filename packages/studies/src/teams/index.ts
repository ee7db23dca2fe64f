import type { Study } from '../study.js';
import { teamBertscoreTable } from './bertscore-table.js';
import { debate } from './surrogate/debate/index.js';
import { teamFacts } from './surrogate/team-facts/index.js';

/**
 * The team studies (docs/teams.md): relay and hub teams that lose facts at each hand-off (Lost in
 * Propagation, and its belief board arms), and debates that drift from the task (Drift No More?). The
 * library runs them as team schedules (relay, hub, debate) with their arms; the study brings the surrogate
 * scenarios that play them: `team-facts` and `debate`, both played by a surrogate that names no scenario
 * (as before scenarios were named).
 */
export const teams: Study = {
  name: 'teams',
  scenarios: [
    { name: 'team-facts', model: teamFacts, implied: true },
    { name: 'debate', model: debate, implied: true },
  ],
  tables: [teamBertscoreTable],
};
