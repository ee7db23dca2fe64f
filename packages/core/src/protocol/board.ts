/**
 * belief-board (docs/DESIGN.md#coordination-protocols): agents answer with [object, claim, confidence] entries on an append-only board.
 * Each entry gets an id from the event that wrote it; an entry about an object its author wrote before revises
 * (points back to) that entry. An agent's version carries its live entries; neighbours read those instead of
 * raw answers.
 */
export interface BoardEntry {
  id: string;
  object: string;
  claim: string;
  confidence: number;
  /** Id of the author's earlier entry on the same object, or null. */
  revises: string | null;
}

/** What a belief-board agent publishes for its readers: its answer and its live entries. */
export interface BoardVersion {
  answer: string;
  entries: BoardEntry[];
}

/** Most live entries an agent keeps (its latest per object): bounds every neighbour line. */
export const MAX_LIVE_ENTRIES = 4;

/**
 * Reads a reply as {answer, entries}. A reply that is not such JSON is an answer with no entries: it still
 * sets the agent's answer, and the row records no board entry.
 */
export function parseBoardReply(text: string): { answer: string; entries: { object: string; claim: string; confidence: number }[] } {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start >= 0 && end > start) {
    try {
      const v = JSON.parse(text.slice(start, end + 1)) as { answer?: unknown; entries?: unknown };
      if (typeof v.answer === 'string') {
        const entries = (Array.isArray(v.entries) ? v.entries : [])
          .filter((e): e is { object: unknown; claim: unknown; confidence?: unknown } => typeof e === 'object' && e !== null)
          .filter((e) => typeof e.object === 'string' && typeof e.claim === 'string')
          .map((e) => ({
            object: (e.object as string).trim(),
            claim: (e.claim as string).replace(/\s+/g, ' ').trim(),
            confidence: clamp01(Number(e.confidence ?? 0.5)),
          }))
          .slice(0, MAX_LIVE_ENTRIES);
        return { answer: v.answer.replace(/\s+/g, ' ').trim(), entries };
      }
    } catch {
      // not JSON: fall through
    }
  }
  return { answer: text.replace(/\s+/g, ' ').trim(), entries: [] };
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0.5;
}

/** Appends an event's entries to its author's live entries: ids, revisions, and the live set after. */
export function applyEntries(
  live: readonly BoardEntry[],
  event: number,
  entries: readonly { object: string; claim: string; confidence: number }[],
): { written: BoardEntry[]; live: BoardEntry[] } {
  const next = [...live];
  const written: BoardEntry[] = [];
  entries.forEach((e, i) => {
    const key = e.object.toLowerCase();
    const at = next.findIndex((x) => x.object.toLowerCase() === key);
    const entry: BoardEntry = {
      id: `e${event}.${i}`,
      object: e.object,
      claim: e.claim,
      confidence: e.confidence,
      revises: at >= 0 ? next[at].id : null,
    };
    if (at >= 0) next.splice(at, 1);
    next.push(entry);
    written.push(entry);
  });
  return { written, live: next.slice(-MAX_LIVE_ENTRIES) };
}

/** An agent's live entries after an event that wrote `written` (as applyEntries left them): for resumes. */
export function foldLive(live: readonly BoardEntry[], written: readonly BoardEntry[]): BoardEntry[] {
  let next = [...live];
  for (const e of written) {
    if (e.revises) next = next.filter((x) => x.id !== e.revises);
    next.push(e);
  }
  return next.slice(-MAX_LIVE_ENTRIES);
}

/** One neighbour's live entries as a single line (answers hold no newline). */
export function renderEntries(entries: readonly BoardEntry[]): string {
  if (entries.length === 0) return '(no board entries)';
  return entries
    .map((e) => `[${e.id}${e.revises ? ` revises ${e.revises}` : ''}] ${e.object}: ${e.claim} (confidence ${e.confidence})`)
    .join('; ');
}

export function encodeBoardVersion(v: BoardVersion): string {
  return JSON.stringify(v);
}

/** A belief-board run's published version; a plain answer (e.g. written by an older run) has no entries. */
export function decodeBoardVersion(value: string): BoardVersion {
  if (value.startsWith('{')) {
    try {
      const v = JSON.parse(value) as BoardVersion;
      if (typeof v.answer === 'string' && Array.isArray(v.entries)) return v;
    } catch {
      // fall through
    }
  }
  return { answer: value, entries: [] };
}
