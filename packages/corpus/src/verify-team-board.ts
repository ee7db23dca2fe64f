import {
  armOf,
  boardAuthorName,
  boardRevisions,
  boardReadBy,
  boardShownTo,
  DEFAULT_BOARD_TOKENS,
  objectKey,
  keepsBoard,
  teamBoardEntries,
  type BoardLogEntry,
  type RunPlan,
  type TeamBoardRow,
  type TeamCallPlan,
} from '@panta/core';

/**
 * A team run's belief board against its replies (docs/teams.md, "Belief board"): in the board arms every
 * call's `board` column holds exactly the entries its reply's board lines give (ids e<event>.<i>, none
 * missing), each revision pointing back at an earlier entry on the same object, and the rendering the call
 * was shown (its entry ids and the objects the cap dropped); in arm `table` the same for the belief table,
 * whose entries only the observer's calls write, each typed observation or belief; in every other arm the
 * column is null.
 */
export function checkTeamBoard(
  run: RunPlan,
  calls: readonly TeamCallPlan[],
  rows: readonly { response: string; board: string | null }[],
): string | null {
  if (!keepsBoard(run.protocol)) {
    const at = rows.findIndex((r) => r.board !== null);
    return at < 0 ? null : `${run.runId}: event ${at} has a board column, but arm ${run.protocol} writes no board`;
  }
  const replies = new Map<number, string>();
  for (const call of calls) replies.set(call.event, rows[call.event].response);
  const revisions = boardRevisions(run.protocol, run.controls.team?.revisions);
  const table = armOf(run.protocol).observer === 'table';
  const written = teamBoardEntries(calls, replies, revisions, table);
  const seen = new Map<string, BoardLogEntry>();
  const cap = run.controls.team?.boardTokens ?? DEFAULT_BOARD_TOKENS;
  const names = boardAuthorName(run.dynamics, run.n);
  for (const call of calls) {
    const where = `${run.runId}: event ${call.event} (${call.role})`;
    const text = rows[call.event].board;
    if (text === null) return `${where} has no board column (arm ${run.protocol} records one on every call)`;
    let row: TeamBoardRow;
    try {
      row = JSON.parse(text) as TeamBoardRow;
    } catch {
      return `${where}: its board column is not JSON`;
    }
    const entries = Array.isArray(row.entries) ? row.entries : [];
    for (const [i, e] of entries.entries()) {
      if (table && call.role !== 'observer') return `${where}: entry ${e.id} on the belief table, which only the observer's calls write`;
      if (table && e.type !== 'observation' && e.type !== 'belief')
        return `${where}: entry ${e.id} has type ${JSON.stringify(e.type)}, not observation or belief`;
      if (e.id !== `e${call.event}.${i}`)
        return `${where}: entry ${i} has id ${e.id}, not e${call.event}.${i} (an entry is missing or out of order)`;
      if (e.revises !== null) {
        const old = seen.get(e.revises);
        if (!old) return `${where}: entry ${e.id} revises ${e.revises}, which is no earlier entry of the run`;
        if (objectKey(old.object) !== objectKey(e.object))
          return `${where}: entry ${e.id} on "${e.object}" revises ${e.revises}, which is on "${old.object}"`;
        if (revisions === 'author' && old.author !== e.author)
          return `${where}: entry ${e.id} by member ${e.author} revises ${e.revises}, member ${old.author}'s (revisions: author)`;
      }
    }
    for (const e of entries) seen.set(e.id, e);
    const own = written.get(call.event) ?? { entries: [], malformed: 0 };
    const shown = boardShownTo(run.protocol, boardReadBy(call, written), cap, names, revisions);
    const expected: TeamBoardRow = { entries: own.entries, malformed: own.malformed, shown: shown.shown, dropped: shown.dropped };
    if (JSON.stringify(row) !== JSON.stringify(expected)) {
      const ids = (r: TeamBoardRow) =>
        `entries [${(r.entries ?? []).map((e) => `${e.id}${e.revises ? `>${e.revises}` : ''}`).join(', ')}], shown [${(r.shown ?? []).join(', ')}], dropped ${r.dropped}, malformed ${r.malformed}`;
      return `${where}: its board column (${ids(row)}) is not what its reply and the board it read give (${ids(expected)})`;
    }
  }
  return null;
}
