import { existsSync } from 'node:fs';
import { queryRows, readParquetSql } from '@panta/corpus';
import { type Cell, section, type Table } from '@panta/report';
import { teamBertscorePath } from '../bertscore-table.js';
import { withDepartures } from '../../departures.js';
import { teamArmTestTable } from './arm-tests.js';
import { loadTeams, type TeamRow } from './data.js';
import { teamDepartures } from './departures.js';
import { beliefFigure, driftFigure, focusFigure, propagationFigure } from './figures.js';
import { type LedgerRow, ledgerTable, loadLedger } from './ledger.js';
import { driftTableTeams, judgeTable, propagationTable, teamCostTable } from './tables.js';

/** What the team section reads: teams.parquet's rows and the departures from the papers the corpus used. */
interface TeamSource {
  rows: TeamRow[];
  departures: string[];
  /** team_bertscore.parquet's rows; null where the corpus has none (written before it, or no references). */
  bertscore: Record<string, unknown>[] | null;
  /** The relay and hub runs' `board` columns (board arms, the belief table); null where the corpus has none. */
  ledger: LedgerRow[] | null;
}

/** BERTScore of the debates' solutions per arm and turn (mean over debates), or in words why there is none. */
export function bertscoreTable(rows: readonly Record<string, unknown>[] | null): Table | null {
  if (rows === null) return null;
  const scored = rows.filter((r) => r.bertscore_f1 !== null && r.bertscore_f1 !== undefined);
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const r of scored) {
    const k = `${r.arm}\u0000${Number(r.turn)}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const mean = (rs: Record<string, unknown>[], f: string) => rs.reduce((s, r) => s + Number(r[f]), 0) / rs.length;
  const model = scored.map((r) => r.model).find((m) => typeof m === 'string');
  return {
    id: 'team-bertscore',
    title: "BERTScore of the debates' solutions against the references",
    caption:
      "Per arm and turn, the mean over debates of BERTScore (greedy matching of the encoder's token embeddings, Zhang et al.) of the turn's solution against the prompt's references, " +
      `the best of several: precision, recall, F1. Encoder: ${model ?? 'none named'}.`,
    columns: ['arm', 'turn', 'debates', 'precision', 'recall', 'F1'],
    rows: [...groups.values()]
      .map((rs): Cell[] => [
        String(rs[0]!.arm),
        Number(rs[0]!.turn),
        rs.length,
        mean(rs, 'bertscore_precision'),
        mean(rs, 'bertscore_recall'),
        mean(rs, 'bertscore_f1'),
      ])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1])),
    empty:
      rows.length === 0
        ? 'No BERTScore: no debate prompt has a reference (accepted answers).'
        : 'No BERTScore: the spec names no encoder (team.bertscore.model, an ONNX export with last_hidden_state), so no score was computed.',
  };
}

async function loadBertscore(dir: string): Promise<Record<string, unknown>[] | null> {
  const file = teamBertscorePath(dir);
  return existsSync(file) ? await queryRows(`SELECT * FROM ${readParquetSql([file])}`) : null;
}

/**
 * The team studies' report section (relay, hub and debate schedules, docs/teams.md), from teams.parquet:
 * lost in propagation and belief injection by arm, FOCUS and drift by turn, the DRIFTJudge's detection,
 * cost per arm, what the boards and the belief table held (events' `board` column), each arm tested against the plain team; each table's caption names the departures from the
 * paper the corpus used (teamDepartures). Registered with report's registerSection by packages/studies/src/report.ts.
 */
export const teamsSection = section<TeamSource>({
  name: 'teams',
  load: async (data, dir) => {
    const rows = await loadTeams(dir);
    if (rows === null) return null;
    const boards = rows.some((r) => r.dynamics === 'relay' || r.dynamics === 'hub');
    return {
      rows,
      departures: teamDepartures(rows, data.manifest.spec),
      bertscore: await loadBertscore(dir),
      ledger: boards ? await loadLedger(dir) : null,
    };
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
    { ids: ['team-ledger'], make: (s) => tagged(ledgerTable(s.ledger), s) },
    { ids: ['team-arm-tests'], make: (s) => tagged(teamArmTestTable(s.rows), s) },
    { ids: ['team-bertscore'], make: (s) => tagged(bertscoreTable(s.bertscore), s) },
  ],
});

function tagged(table: Table | null, s: TeamSource): Table | null {
  return table === null ? null : withDepartures(table, s.departures);
}
