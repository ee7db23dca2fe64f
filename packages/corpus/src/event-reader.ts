import duckdb from '@duckdb/node-bindings';
import { duckdbApi } from './duckdb-api.js';
import { openConnection, readParquetSql, sqlIdent } from './duckdb.js';
import { toPlain } from './plain-values.js';
import { fromDuckDBType, type SqlType } from './sql-type.js';
import { readVector, type ColumnValues, type DecodedColumn } from './vector-read.js';

export type { ColumnValues } from './vector-read.js';

export interface ReadEventsOptions {
  /** Columns to read (default: all). Reading only what is needed is the main cost saver. */
  columns?: readonly string[];
  /** A SQL predicate over the columns, e.g. `sweep = 0`. */
  where?: string;
  /**
   * A SQL ORDER BY list. Without it rows come in file order (files in the order given, rows in file
   * order), which for a run's parts or shard is already event order: prefer that to a sort, which makes
   * DuckDB materialise everything it reads.
   */
  orderBy?: string;
  /** Rows per yielded batch (default 2048, DuckDB's chunk size); the last batch may be shorter. */
  batchRows?: number;
}

/**
 * A batch of rows, column by column (forms in vector-read.ts): `emb_*` columns are ONE Float32Array of
 * rows x dims[name]; `neighbours` is Int32Array[]; `read_versions` is Float64Array[] (event indices as
 * numbers); `created_at` is epoch milliseconds; other scalars are plain arrays of numbers and strings.
 */
export interface ColumnBatch {
  rows: number;
  columns: Record<string, ColumnValues>;
  /** Per-row length of each flat (fixed-size) column in this batch. */
  dims: Record<string, number>;
}

/**
 * Streams rows of one or more event files (finalized shards and/or parts) as columnar batches. The
 * connection is private to the generator and closed when it ends, including when the consumer stops early.
 */
export async function* readEvents(files: string | readonly string[], options: ReadEventsOptions = {}): AsyncGenerator<ColumnBatch> {
  const list = typeof files === 'string' ? [files] : [...files];
  const batchRows = options.batchRows ?? 2048;
  if (!Number.isSafeInteger(batchRows) || batchRows <= 0) throw new Error(`batchRows must be a positive integer, got ${batchRows}`);
  if (list.length === 0) return;
  const select = options.columns ? options.columns.map(sqlIdent).join(', ') : '*';
  if (options.columns && options.columns.length === 0) throw new Error('readEvents: empty column list');
  let sql = `SELECT ${select} FROM ${readParquetSql(list)}`;
  if (options.where) sql += ` WHERE ${options.where}`;
  if (options.orderBy) sql += ` ORDER BY ${options.orderBy}`;

  const con = await openConnection();
  try {
    const result = await con.stream(sql);
    const names = result.deduplicatedColumnNames();
    const types: (SqlType | undefined)[] = result.columnTypes().map(fromDuckDBType);
    // Embedding columns come back from Parquet as FLOAT[] (it has no fixed-size list): read them flat.
    const flat = names.map((n) => n.startsWith('emb_'));
    let pending: { rows: number; columns: DecodedColumn[] }[] = [];
    let pendingRows = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      const rows = chunk ? chunk.rowCount : 0;
      if (!chunk || rows === 0) break;
      const columns = names.map((_, j): DecodedColumn => {
        const t = types[j];
        if (t) return readVector(duckdb.data_chunk_get_vector(chunk.chunk, j), t, rows, flat[j]);
        // Types outside the fast codecs (structs, dates...): node-api's generic conversion.
        return { values: chunk.convertColumnValues(j, duckdbApi().JSDuckDBValueConverter).map(toPlain) };
      });
      pending.push({ rows, columns });
      pendingRows += rows;
      while (pendingRows >= batchRows) {
        const { batch, rest } = takeRows(pending, batchRows, names);
        yield batch;
        pending = rest;
        pendingRows -= batchRows;
      }
    }
    if (pendingRows > 0) yield takeRows(pending, pendingRows, names).batch;
  } finally {
    con.closeSync();
  }
}

type Part = { rows: number; columns: DecodedColumn[] };

/** Cuts the first `n` rows off the pending chunks into one batch. */
function takeRows(pending: Part[], n: number, names: string[]): { batch: ColumnBatch; rest: Part[] } {
  const used: Part[] = [];
  const rest: Part[] = [];
  let need = n;
  for (const p of pending) {
    if (need === 0) rest.push(p);
    else if (p.rows <= need) {
      used.push(p);
      need -= p.rows;
    } else {
      used.push({ rows: need, columns: p.columns.map((c) => sliceColumn(c, 0, need)) });
      rest.push({ rows: p.rows - need, columns: p.columns.map((c) => sliceColumn(c, need, p.rows)) });
      need = 0;
    }
  }
  const batch: ColumnBatch = { rows: n, columns: {}, dims: {} };
  names.forEach((name, j) => {
    const col =
      used.length === 1
        ? used[0].columns[j]
        : concatColumns(
            used.map((u) => u.columns[j]),
            name,
          );
    batch.columns[name] = col.values;
    if (col.dim !== undefined) batch.dims[name] = col.dim;
  });
  return { batch, rest };
}

function sliceColumn(c: DecodedColumn, start: number, end: number): DecodedColumn {
  if (Array.isArray(c.values)) return { values: c.values.slice(start, end) };
  const d = c.dim ?? 1;
  return { values: c.values.slice(start * d, end * d), dim: c.dim };
}

function concatColumns(parts: DecodedColumn[], name: string): DecodedColumn {
  const first = parts[0];
  if (Array.isArray(first.values)) return { values: parts.flatMap((p) => p.values as unknown[]) };
  const dim = first.dim;
  for (const p of parts) if (p.dim !== dim) throw new Error(`column ${name}: row length ${p.dim} after ${dim}`);
  const total = parts.reduce((s, p) => s + p.values.length, 0);
  const out = new (first.values.constructor as new (n: number) => Float32Array | Float64Array | Int32Array)(total);
  let off = 0;
  for (const p of parts) {
    out.set(p.values as ArrayLike<number>, off);
    off += p.values.length;
  }
  return { values: out, dim };
}
