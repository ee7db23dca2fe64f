import {
  appendBoardLines,
  armOf,
  boardAuthorName,
  boardLinesOf,
  boardRevisions,
  boardReadBy,
  boardShownTo,
  DEFAULT_BOARD_TOKENS,
  teamBoardEntries,
  teamCalls,
  type RenderedBoard,
  type RunPlan,
  type TeamBoardRow,
  type TeamCallPlan,
} from '@panta/core';

/**
 * A board arm's call (docs/teams.md, "Belief board"), or a `table` arm's (the observer's belief table, kept
 * with the same mechanism): the board it reads, rebuilt from the replies it reads (its read set holds every
 * call that wrote to that board), the rendering it is shown, and its row's `board` column once its reply is
 * known.
 */
export function boardOfCall(
  run: RunPlan,
  call: TeamCallPlan,
  reads: readonly string[],
): { shown: RenderedBoard; row: (reply: string) => TeamBoardRow } {
  const replies = new Map<number, string>();
  call.reads.forEach((r, i) => replies.set(r.event, reads[i]));
  const calls = teamCalls(run);
  const revisions = boardRevisions(run.protocol, run.controls.team?.revisions);
  const table = armOf(run.protocol).observer === 'table';
  const board = boardReadBy(call, teamBoardEntries(calls, replies, revisions, table));
  const shown = boardShownTo(
    run.protocol,
    board,
    run.controls.team?.boardTokens ?? DEFAULT_BOARD_TOKENS,
    boardAuthorName(run.dynamics, run.n),
    revisions,
  );
  return {
    shown,
    row: (reply) => {
      const parsed = boardLinesOf(call, reply, table);
      const entries = appendBoardLines(board, { event: call.event, step: call.sweep, author: call.agent }, parsed.lines, revisions);
      return { entries, malformed: parsed.malformed, shown: shown.shown, dropped: shown.dropped };
    },
  };
}
