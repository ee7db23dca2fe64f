/**
 * The belief board as paper 001 publishes it, for relay and hub teams (docs/teams.md, "Belief board"): one
 * shared, append-only board per run. A member writes entries by adding lines `BELIEF: object | claim |
 * confidence` to its reply (the paper's add_belief / revise_belief tool calls as text); an entry about an
 * object already on the board the member read revises that object's latest entry, and points back at it.
 * Nothing is ever deleted: a revision is a new entry. Everything here is a pure function of the replies and
 * the schedule's read sets, so `panta verify` recomputes the board from the responses alone.
 */
export interface BoardLogEntry {
  /** `e<event>.<i>`: the i-th entry the call of that event wrote. */
  id: string;
  /** The step (the row's `sweep`) and the member (its `agent`) that wrote it. */
  step: number;
  author: number;
  object: string;
  claim: string;
  confidence: number;
  /** The id of the entry it revises (the object's latest entry on the board its author read), or null. */
  revises: string | null;
  /** The belief table (arm `table`): what the observer took the entry for; absent on a board's entries. */
  type?: LedgerType;
}

/** The belief table's entry types: a fact the member found or checked, or its stance. */
export type LedgerType = 'observation' | 'belief';

/** An entry as a reply states it, before the board gives it an id. */
export interface BoardLine {
  object: string;
  claim: string;
  confidence: number;
  /** The belief table's lines only. */
  type?: LedgerType;
}

export const BOARD_LINE_PREFIX = 'BELIEF:';

/**
 * A reply's board lines and the rest of its text. A line starting with `BELIEF:` (any case) is a board line;
 * it must hold exactly object | claim | confidence, the first two non-empty, the confidence a number in
 * [0, 1]; any other board line is malformed: ignored, and counted.
 */
export function parseBoardLines(reply: string): { lines: BoardLine[]; malformed: number; rest: string } {
  return parseEntryLines(reply, [[BOARD_LINE_PREFIX, undefined]]);
}

export const OBSERVATION_LINE_PREFIX = 'OBSERVATION:';

/**
 * An observer's reply (arm `table`): its ledger lines, `OBSERVATION: object | claim | confidence` (a fact
 * the member found or checked) or `BELIEF: object | claim | confidence` (its stance), with the board's
 * fields and rules; any other such line is malformed (ignored, counted), and other text is left aside.
 */
export function parseLedgerLines(reply: string): { lines: BoardLine[]; malformed: number; rest: string } {
  return parseEntryLines(reply, [
    [OBSERVATION_LINE_PREFIX, 'observation'],
    [BOARD_LINE_PREFIX, 'belief'],
  ]);
}

function parseEntryLines(
  reply: string,
  prefixes: readonly (readonly [string, LedgerType | undefined])[],
): { lines: BoardLine[]; malformed: number; rest: string } {
  const lines: BoardLine[] = [];
  const rest: string[] = [];
  let malformed = 0;
  for (const raw of reply.split('\n')) {
    const trimmed = raw.trim();
    const prefix = prefixes.find(([p]) => trimmed.slice(0, p.length).toUpperCase() === p);
    if (!prefix) {
      rest.push(raw);
      continue;
    }
    const fields = trimmed
      .slice(prefix[0].length)
      .split('|')
      .map((f) => f.replace(/\s+/g, ' ').trim());
    const confidence = fields.length === 3 && /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(fields[2]) ? Number(fields[2]) : Number.NaN;
    if (fields.length !== 3 || fields[0] === '' || fields[1] === '' || !(confidence >= 0 && confidence <= 1)) {
      malformed++;
      continue;
    }
    lines.push({ object: fields[0], claim: fields[1], confidence, ...(prefix[1] ? { type: prefix[1] } : {}) });
  }
  return { lines, malformed, rest: rest.join('\n').trim() };
}

/** Objects are the same when they read the same ignoring case and spacing. */
export function objectKey(object: string): string {
  return object.toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * The key an entry revises under: its object's (revisions `object`, a corpus from before the option), or its
 * author's and object's (`author`, the paper's: a revision is the author changing its own mind).
 */
export function revisionKey(e: { author: number; object: string }, revisions: 'author' | 'object' = 'object'): string {
  return revisions === 'author' ? `${e.author}\u0000${objectKey(e.object)}` : objectKey(e.object);
}

/**
 * The entries a call writes, given the board it read (entries in write order): each line gets the next id
 * of the event and revises the latest entry on its object (revisions `author`: its author's own latest entry
 * on it), counting the call's own earlier lines.
 */
export function appendBoardLines(
  board: readonly BoardLogEntry[],
  at: { event: number; step: number; author: number },
  lines: readonly BoardLine[],
  revisions: 'author' | 'object' = 'object',
): BoardLogEntry[] {
  const latest = new Map<string, string>();
  for (const e of board) latest.set(revisionKey(e, revisions), e.id);
  return lines.map((l, i) => {
    const key = revisionKey({ author: at.author, object: l.object }, revisions);
    const entry: BoardLogEntry = {
      id: `e${at.event}.${i}`,
      step: at.step,
      author: at.author,
      object: l.object,
      claim: l.claim,
      confidence: l.confidence,
      revises: latest.get(key) ?? null,
      ...(l.type ? { type: l.type } : {}),
    };
    latest.set(key, entry.id);
    return entry;
  });
}
