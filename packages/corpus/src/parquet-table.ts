import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { BufferTable } from './buffer-table.js';
import { withConnection } from './duckdb.js';
import type { ColumnDef } from './event-schema.js';
import type { RowOf, TableDecl } from './table.js';
import { commitFile, removeQuietly } from './fs-durable.js';
import { toPlain } from './plain-values.js';
import { tmpName } from './corpus-paths.js';

/** Rows as objects keyed by column name, or columns as arrays (or typed arrays) keyed by column name. */
export type TableData<T extends TableDecl> = readonly RowOf<T>[] | { readonly [K in keyof RowOf<T>]: ArrayLike<RowOf<T>[K]> };

/**
 * Writes a small table (order_params.parquet, runs.parquet, whitening/...) as one ZSTD Parquet file,
 * under a .tmp name then renamed, so readers never see a partial file. The rows are typed by the table's
 * declaration (RowOf), so a producer's row that lacks a column or holds the wrong type does not compile.
 *
 * Types: BOOLEAN, INTEGER, BIGINT, FLOAT, DOUBLE, VARCHAR, TIMESTAMP and lists / fixed-size arrays of
 * them (`DOUBLE[]`, `DOUBLE[384]`). Values: numbers (or bigint for BIGINT), strings, booleans, Date or
 * epoch milliseconds for TIMESTAMP, arrays or typed arrays for lists; null or undefined is SQL NULL, refused
 * in a column the declaration does not make nullable. A row object must have every column as a key (a
 * missing key is usually a misspelt name).
 */
export async function writeParquetTable<T extends TableDecl>(path: string, table: T, data: TableData<T>): Promise<void> {
  const columns: readonly ColumnDef[] = table.columns;
  const { values, rows } = toColumns(columns, data as UntypedData);
  refuseNulls(table, values);
  await mkdir(dirname(path), { recursive: true });
  const tmp = tmpName(path);
  try {
    await withConnection(async (con) => {
      const table = await BufferTable.create(con, columns);
      try {
        table.appendColumns(values, rows);
        await table.copyTo(tmp, 'FORMAT parquet, COMPRESSION zstd');
      } finally {
        await table.close();
      }
    });
    await commitFile(tmp, path);
  } catch (err) {
    await removeQuietly(tmp);
    throw err;
  }
}

/** Throws, before anything is written, on a NULL in a column the table does not declare nullable. */
function refuseNulls(table: TableDecl, values: readonly ArrayLike<unknown>[]): void {
  table.columns.forEach((c, j) => {
    if (c.nullable) return;
    const column = values[j];
    for (let i = 0; i < column.length; i++)
      if (column[i] === null || column[i] === undefined)
        throw new Error(`${table.name}: column ${c.name}, row ${i}: NULL, and the column is not declared nullable`);
  });
}

type UntypedData = readonly Record<string, unknown>[] | Readonly<Record<string, ArrayLike<unknown>>>;

function toColumns(columns: readonly ColumnDef[], data: UntypedData): { values: ArrayLike<unknown>[]; rows: number } {
  if (Array.isArray(data)) {
    const rows = data as readonly Record<string, unknown>[];
    rows.forEach((row, i) => {
      for (const c of columns) if (!(c.name in row)) throw new Error(`row ${i} has no column ${c.name}`);
    });
    return { values: columns.map((c) => rows.map((r) => r[c.name])), rows: rows.length };
  }
  const cols = data as Readonly<Record<string, ArrayLike<unknown>>>;
  let rows: number | undefined;
  const values = columns.map((c) => {
    const v = cols[c.name];
    if (!v) throw new Error(`no data for column ${c.name}`);
    if (rows !== undefined && v.length !== rows) throw new Error(`column ${c.name} has ${v.length} values, others ${rows}`);
    rows = v.length;
    return v;
  });
  return { values, rows: rows ?? 0 };
}

/**
 * Runs a query and returns its rows as plain objects: BIGINT as number when exact (else bigint), lists
 * and arrays as JS arrays, TIMESTAMP as Date, NULL as null. For small tables; events go through readEvents.
 */
export async function queryRows(sql: string): Promise<Record<string, unknown>[]> {
  return withConnection(async (con) => {
    const reader = await con.runAndReadAll(sql);
    return reader.getRowObjectsJS().map((r) => toPlain(r) as Record<string, unknown>);
  });
}
