import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TeamBoardRow } from '@panta/core';
import { eventsDir, queryRows, teamsTablePath } from '@panta/corpus';
import type { Cell, Table } from '@panta/report';
import { armOrder } from './aggregate.js';

/** One call's `board` column (the board arms' and the belief table's), with its run's team, arm and population. */
export interface LedgerRow {
  run_id: string;
  dynamics: string;
  arm: string;
  population: string;
  board: string;
}

/** The `board` columns of a corpus's relay and hub runs (null: no team table or no event shards). */
export async function loadLedger(dir: string): Promise<LedgerRow[] | null> {
  const teams = teamsTablePath(dir);
  const events = eventsDir(dir);
  if (!existsSync(teams) || !existsSync(events)) return null;
  const q = (p: string) => p.replaceAll("'", "''");
  return (await queryRows(
    `SELECT e.run_id, t.dynamics, t.arm, coalesce(t.population_arm, 'none') AS population, e.board
     FROM read_parquet('${q(join(events, '*.parquet'))}') e JOIN read_parquet('${q(teams)}') t USING (run_id)
     WHERE e.board IS NOT NULL AND t.dynamics IN ('relay', 'hub') ORDER BY e.run_id, e.event`,
  )) as unknown as LedgerRow[];
}

/**
 * What the board arms' boards and the observer's belief table held (docs/teams.md, "Belief board"), per team,
 * arm and population: entries written per run (on the belief table, split by type), revisions, malformed
 * lines, and the calls whose rendering dropped objects under the cap: whether the mechanism worked at all.
 */
export function ledgerTable(rows: readonly LedgerRow[] | null): Table | null {
  if (rows === null || rows.length === 0) return null;
  const groups = new Map<string, { key: LedgerRow; runs: Set<string>; n: Record<string, number> }>();
  for (const r of rows) {
    const k = `${r.dynamics}\u0000${r.arm}\u0000${r.population}`;
    const g = groups.get(k) ?? {
      key: r,
      runs: new Set(),
      n: { entries: 0, observation: 0, belief: 0, revisions: 0, malformed: 0, dropping: 0 },
    };
    groups.set(k, g);
    g.runs.add(r.run_id);
    const board = JSON.parse(r.board) as TeamBoardRow;
    for (const e of board.entries) {
      g.n.entries++;
      if (e.type) g.n[e.type]++;
      if (e.revises !== null) g.n.revisions++;
    }
    g.n.malformed += board.malformed;
    if (board.dropped > 0) g.n.dropping++;
  }
  const order = armOrder([...groups.values()].map((g) => g.key.arm));
  const sorted = [...groups.values()].sort(
    (a, b) =>
      a.key.dynamics.localeCompare(b.key.dynamics) ||
      order.indexOf(a.key.arm) - order.indexOf(b.key.arm) ||
      a.key.population.localeCompare(b.key.population),
  );
  return {
    id: 'team-ledger',
    title: 'Belief boards and the belief table: what was written per run',
    caption:
      'Per team, arm and population, per run: the entries written (board arms: by the members; table: by the observer, split into observations and beliefs), ' +
      'the entries that revise an earlier one, the entry lines ignored as malformed, and the calls whose rendering dropped objects under the cap (none where the board is never shown).',
    columns: [
      'team',
      'arm',
      'population',
      'runs',
      'entries',
      'observations',
      'beliefs',
      'revisions',
      'malformed lines',
      'calls with objects dropped',
    ],
    rows: sorted.map(({ key, runs, n }): Cell[] => {
      const per = (x: number) => x / runs.size;
      const typed = key.arm === 'table';
      return [
        key.dynamics,
        key.arm,
        key.population,
        runs.size,
        per(n.entries),
        typed ? per(n.observation) : null,
        typed ? per(n.belief) : null,
        per(n.revisions),
        per(n.malformed),
        per(n.dropping),
      ];
    }),
  };
}
