import type { CorpusData } from './corpus-data.js';
import type { Figure } from './figure.js';
import type { Table } from './table.js';

/**
 * One figure or table of the report and the function that makes it. Adding a figure is its function and one
 * entry in a section of catalog.ts.
 */
export interface Entry<S, T> {
  /** The ids (file stems) it writes; `{encoder}` stands for each encoder's name, for an entry that draws one per encoder. */
  ids: readonly string[];
  /** The figure or table, several (one per encoder), or null where the corpus has nothing for it. */
  make: (source: S) => T | readonly T[] | null;
}

/**
 * A part of the report drawn from one source: the population sweep (runs, order parameters, events) or a study's
 * own table (teams.parquet, a study's). Its figures and tables follow the previous part's, in entry order.
 */
export interface Section<S> {
  name: string;
  /** What its entries read; null when the corpus has none of it (no teams.parquet, say): the section adds nothing. `dir` is the folder as given. */
  load: (data: CorpusData, dir: string) => Promise<S | null>;
  /** Whether its figures can be drawn yet (default: whenever its source is there). */
  drawable?: (source: S) => boolean;
  figures: readonly Entry<S, Figure>[];
  tables: readonly Entry<S, Table>[];
  /** A reason shown for each of its empty tables instead of the table's own (say, every run is a team run); null for none. */
  emptyReason?: (source: S) => string | null;
}

/** A section with its source type closed over: what the catalog lists. */
export interface CatalogSection {
  name: string;
  /** Every id its figures and tables may write (`{encoder}` as in Entry.ids). */
  figureIds: readonly string[];
  tableIds: readonly string[];
  draw(data: CorpusData, dir: string): Promise<{ figures: Figure[]; tables: Table[] }>;
}

/** Whether `id` is one of `patterns`, `{encoder}` standing for each of `encoders`. */
export function idMatches(id: string, patterns: readonly string[], encoders: readonly string[]): boolean {
  return patterns.some((p) => (p.includes('{encoder}') ? encoders.some((e) => p.replaceAll('{encoder}', e) === id) : p === id));
}

function makeAll<S, T extends { id: string }>(entries: readonly Entry<S, T>[], source: S, encoders: readonly string[]): T[] {
  const out: T[] = [];
  for (const entry of entries) {
    const made = entry.make(source);
    for (const item of made === null ? [] : Array.isArray(made) ? (made as readonly T[]) : [made as T]) {
      // A programming error, not bad input: the catalog must name every id it writes.
      if (!idMatches(item.id, entry.ids, encoders)) throw new Error(`report catalog: entry ${entry.ids.join(', ')} made ${item.id}`);
      out.push(item);
    }
  }
  return out;
}

export function section<S>(s: Section<S>): CatalogSection {
  return {
    name: s.name,
    figureIds: s.figures.flatMap((e) => e.ids),
    tableIds: s.tables.flatMap((e) => e.ids),
    async draw(data, dir) {
      const source = await s.load(data, dir);
      if (source === null) return { figures: [], tables: [] };
      const figures = s.drawable === undefined || s.drawable(source) ? makeAll(s.figures, source, data.encoders) : [];
      const tables = makeAll(s.tables, source, data.encoders);
      const reason = s.emptyReason?.(source) ?? null;
      if (reason !== null) for (const t of tables) if (t.rows.length === 0) t.empty = reason;
      return { figures, tables };
    },
  };
}
