import type { TeamCallPlan } from '../team/calls.js';
import { appendBoardLines, parseBoardLines, parseLedgerLines, type BoardLogEntry } from './board-log.js';
import { renderBoard, type RenderedBoard } from './board-render.js';

import { teamSchedule } from '../team/schedules.js';
import { armOf } from './registry.js';

/** Arms whose members write board entries. */
export function writesBoard(protocol: string): boolean {
  return armOf(protocol).board !== undefined;
}

/**
 * Arms whose calls record a board column: the board arms (members write it), and `table`, whose observer
 * calls write the belief table (a ledger kept with the board's mechanism: entries, revisions, rendering).
 */
export function keepsBoard(protocol: string): boolean {
  return writesBoard(protocol) || armOf(protocol).observer === 'table';
}

/**
 * What a line revises on the run's board: the spec's rule (`team.revisions`) on a board; on the belief table
 * the object's latest entry, whoever it is about (the observer revises its own ledger).
 */
export function boardRevisions(protocol: string, revisions: 'author' | 'object' | undefined): 'author' | 'object' {
  return armOf(protocol).observer === 'table' ? 'object' : (revisions ?? 'object');
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
  table = false,
): Map<number, { entries: BoardLogEntry[]; malformed: number }> {
  const out = new Map<number, { entries: BoardLogEntry[]; malformed: number }>();
  for (const call of calls) {
    const reply = replies.get(call.event);
    if (reply === undefined) continue;
    const parsed = boardLinesOf(call, reply, table);
    const at = { event: call.event, step: call.sweep, author: call.agent };
    const entries = appendBoardLines(boardReadBy(call, out), at, parsed.lines, revisions);
    out.set(call.event, { entries, malformed: parsed.malformed });
  }
  return out;
}

/**
 * The entries a call's reply states: its board lines; on the belief table (`table`) an observer's ledger
 * lines, about the member it observed (the call's agent), and nothing from a member's own reply.
 */
export function boardLinesOf(call: TeamCallPlan, reply: string, table: boolean): ReturnType<typeof parseBoardLines> {
  if (!table) return parseBoardLines(reply);
  return call.role === 'observer' ? parseLedgerLines(reply) : { lines: [], malformed: 0, rest: reply };
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
  const table = armOf(protocol).observer === 'table';
  if (armOf(protocol).board !== 'shown' && !table) return { lines: [], shown: [], dropped: 0 };
  return renderBoard(board, capTokens, authorName, revisions, table);
}
