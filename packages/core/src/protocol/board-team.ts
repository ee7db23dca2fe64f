import type { TeamCallPlan } from '../team/calls.js';
import { appendBoardLines, parseBoardLines, type BoardLogEntry } from './board-log.js';
import { renderBoard, type RenderedBoard } from './board-render.js';

import { teamSchedule } from '../team/schedules.js';
import { armOf } from './registry.js';

/** Arms whose members write board entries. */
export function writesBoard(protocol: string): boolean {
  return armOf(protocol).board !== undefined;
}

/** What a call of a board arm wrote and read: its row's `board` column (JSON). */
export interface TeamBoardRow {
  /** The entries the call wrote, in reply order. */
  entries: BoardLogEntry[];
  /** Board lines of its reply that were not object | claim | confidence: ignored. */
  malformed: number;
  /** Ids of the entries its prompt showed (none in board_inert), and the objects the cap dropped. */
  shown: string[];
  dropped: number;
}

/** How the board names a member: relay agents, hub workers and the orchestrator. */
export function boardAuthorName(dynamics: string, size: number): (author: number) => string {
  return teamSchedule(dynamics).memberName(size);
}

/**
 * The board of a team run: each call's entries, computed in event order from the replies of the calls
 * given (`replies` by event; a call whose reply is absent wrote nothing yet). A call writes against the
 * board it read: the entries of every call it reads, in event order (a read set is closed under reading,
 * so this is exactly what came before it on its branch of the DAG).
 */
export function teamBoardEntries(
  calls: readonly TeamCallPlan[],
  replies: ReadonlyMap<number, string>,
  revisions: 'author' | 'object' = 'object',
): Map<number, { entries: BoardLogEntry[]; malformed: number }> {
  const out = new Map<number, { entries: BoardLogEntry[]; malformed: number }>();
  for (const call of calls) {
    const reply = replies.get(call.event);
    if (reply === undefined) continue;
    const parsed = parseBoardLines(reply);
    const at = { event: call.event, step: call.sweep, author: call.agent };
    const entries = appendBoardLines(boardReadBy(call, out), at, parsed.lines, revisions);
    out.set(call.event, { entries, malformed: parsed.malformed });
  }
  return out;
}

/** The board a call reads: the entries of the calls it reads, in event order. */
export function boardReadBy(call: TeamCallPlan, written: ReadonlyMap<number, { entries: BoardLogEntry[] }>): BoardLogEntry[] {
  const events = [...new Set(call.reads.map((r) => r.event))].sort((a, b) => a - b);
  return events.flatMap((e) => written.get(e)?.entries ?? []);
}

/** The board a call of arm `protocol` is shown (none in board_inert: its rendering has no lines). */
export function boardShownTo(
  protocol: string,
  board: readonly BoardLogEntry[],
  capTokens: number,
  authorName: (author: number) => string,
  revisions: 'author' | 'object' = 'object',
): RenderedBoard {
  if (armOf(protocol).board !== 'shown') return { lines: [], shown: [], dropped: 0 };
  return renderBoard(board, capTokens, authorName, revisions);
}
