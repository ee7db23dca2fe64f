/** A table of the report and its CSV: a leaf every table file imports (it imports nothing of the report). */

export type Cell = string | number | boolean | null;

/** A table of the report: shown as an HTML table in index.html and written as CSV. */
export interface Table {
  /** File stem of its CSV under the report folder (`tables/<id>.csv`). */
  id: string;
  title: string;
  caption: string;
  columns: string[];
  rows: Cell[][];
  /** Shown instead of the table when there are no rows (e.g. one encoder: no pair to correlate). */
  empty?: string;
}

/** RFC 4180 CSV: header, then rows; null as an empty field. */
export function tableCsv(table: Table): string {
  const field = (c: Cell | string) => {
    const s = c === null ? '' : String(c);
    return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return `${[table.columns, ...table.rows].map((r) => r.map(field).join(',')).join('\n')}\n`;
}
