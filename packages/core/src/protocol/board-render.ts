import { CHARS_PER_TOKEN } from '../names.js';
import { revisionKey, type BoardLogEntry } from './board-log.js';

/** Tokens the rendered board may take in a prompt when the spec says nothing (`team.board_tokens`). */
export const DEFAULT_BOARD_TOKENS = 256;

export const BOARD_HEADER = 'Belief board (shared, append-only; the latest entry per object):';
/** The header when the cap dropped `dropped` older objects. */
export function boardHeaderDropping(dropped: number): string {
  return `Belief board (shared, append-only; the latest entry per object; ${dropped} older not shown):`;
}
export const BOARD_EMPTY = 'Belief board: (empty)';

/** The belief table (arm `table`): the observer's ledger, rendered as the board is, each entry with its type. */
export const TABLE_HEADER = "Belief table (an observer's ledger of what each member observed and believes; the latest entry per object):";
export function tableHeaderDropping(dropped: number): string {
  return `Belief table (an observer's ledger of what each member observed and believes; the latest entry per object; ${dropped} older not shown):`;
}
export const TABLE_EMPTY = 'Belief table: (empty)';
export const BOARD_ENTRY = '- [';

export interface RenderedBoard {
  /** The prompt lines: a header, then one line per object shown, oldest first. */
  lines: string[];
  /** Ids of the entries shown, in line order. */
  shown: string[];
  /** Objects whose latest entry did not fit the cap (the oldest ones). */
  dropped: number;
}

/**
 * The board as a member reads it at the start of its turn: per object its latest entry, marked
 * `[revised ...]` with the claim it replaced when it revises one; objects in the order of their latest
 * entry. Beyond the cap (entry lines at CHARS_PER_TOKEN characters a token) the oldest objects are dropped
 * first and counted in the header. Superseded entries are not shown but stay on the board (and in the corpus).
 * With revisions `author` the latest entry per author and object: each member's own claim, its revision
 * marked `[revised; was ...]` with the claim its author gave up. `table`: the belief table's header, and
 * each entry's type before its confidence.
 */
export function renderBoard(
  entries: readonly BoardLogEntry[],
  capTokens: number,
  authorName: (author: number) => string,
  revisions: 'author' | 'object' = 'object',
  table = false,
): RenderedBoard {
  if (entries.length === 0) return { lines: [table ? TABLE_EMPTY : BOARD_EMPTY], shown: [], dropped: 0 };
  const byId = new Map(entries.map((e) => [e.id, e]));
  const latest = new Map<string, BoardLogEntry>();
  for (const e of entries) {
    const key = revisionKey(e, revisions);
    latest.delete(key);
    latest.set(key, e);
  }
  const all = [...latest.values()].map((e) => {
    const old = e.revises === null ? undefined : byId.get(e.revises);
    const by = revisions === 'author' ? '' : ` by ${authorName(old?.author ?? 0)}`;
    const mark = old ? ` [revised; was "${old.claim}"${by}]` : '';
    return {
      id: e.id,
      line: `${BOARD_ENTRY}${e.id}] ${authorName(e.author)} on ${e.object}: ${e.claim} (${e.type ? `${e.type}, ` : ''}confidence ${e.confidence})${mark}`,
    };
  });
  const budget = capTokens * CHARS_PER_TOKEN;
  let used = 0;
  let first = all.length;
  while (first > 0 && used + all[first - 1].line.length + 1 <= budget) {
    used += all[first - 1].line.length + 1;
    first--;
  }
  const kept = all.slice(first);
  const header = table ? (first > 0 ? tableHeaderDropping(first) : TABLE_HEADER) : first > 0 ? boardHeaderDropping(first) : BOARD_HEADER;
  return { lines: [header, ...kept.map((k) => k.line)], shown: kept.map((k) => k.id), dropped: first };
}
