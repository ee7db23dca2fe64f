import type { Table } from '@panta/report';

/** A caption with the departures from the paper a corpus used named at its end (none: the caption as it is). */
export function withDepartures(table: Table, departures: readonly string[]): Table {
  if (departures.length === 0) return table;
  return { ...table, caption: `${table.caption} Departures from the paper in this corpus: ${departures.join('; ')}.` };
}
