import type { SummaryRow } from '@panta/engine';

/** A plain aligned table; numbers right-aligned, and the columns in `right` (numbers already formatted). */
export function formatTable(header: string[], rows: (string | number)[][], right: readonly number[] = []): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, c) => Math.max(...cells.map((r) => r[c].length)));
  const toRight = (c: number) => typeof rows[0]?.[c] === 'number' || right.includes(c);
  return cells
    .map((r, i) => {
      const line = r.map((cell, c) => (toRight(c) && i > 0 ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('  ');
      return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

/** Protocol and last-sweep columns appear only when the sweep grids protocols or stopped runs early. */
export function summaryTable(rows: readonly SummaryRow[]): string {
  const f = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));
  const protocols = new Set(rows.map((r) => r.protocol)).size > 1;
  const sweeps = Math.max(...rows.map((r) => r.last_sweep));
  const early = rows.some((r) => r.last_sweep < sweeps);
  return formatTable(
    ['prompt', 'geometry', 'N', 'T', ...(protocols ? ['protocol'] : []), 'trials', ...(early ? ['last sweep'] : []), 'm', 'q', 'rho'],
    rows.map((r) => [
      r.prompt_id,
      r.geometry,
      r.n,
      r.temperature,
      ...(protocols ? [r.protocol] : []),
      r.runs,
      ...(early ? [r.last_sweep.toFixed(1)] : []),
      f(r.magnetisation),
      f(r.cohesion),
      f(r.rho),
    ]),
  );
}
