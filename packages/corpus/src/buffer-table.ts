import duckdb from '@duckdb/node-bindings';
import type { DuckDBAppender, DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { duckdbApi } from './duckdb-api.js';
import { sqlIdent, sqlString } from './duckdb.js';
import { columnListSql, type ColumnDef } from './event-schema.js';
import { parseSqlType, sqlTypeText, toLogicalType, type SqlType } from './sql-type.js';
import { writeVector } from './vector-write.js';
import { CHUNK_ROWS } from './chunk-source.js';

let tableCounter = 0;

/**
 * An in-memory staging table on a private connection, filled chunk by chunk through an Appender and
 * written out with `COPY ... TO 'x.parquet'`. DuckDB's only Parquet writer is COPY, and COPY reads from a
 * query: a staging table is the cheapest source that keeps types exact (FLOAT[d], INTEGER[], ...).
 *
 * One reusable data chunk is filled column by column (see vector-write.ts) and handed to the Appender,
 * which copies it; the chunk is then reset for the next 2048 rows.
 */
export class BufferTable {
  private readonly chunk: duckdb.DataChunk;
  private readonly chunkWrapper: DuckDBDataChunk;
  private closed = false;

  private constructor(
    readonly connection: DuckDBConnection,
    readonly table: string,
    readonly columns: readonly ColumnDef[],
    readonly types: readonly SqlType[],
    private appender: DuckDBAppender,
  ) {
    this.chunk = duckdb.create_data_chunk(types.map(toLogicalType));
    this.chunkWrapper = new (duckdbApi().DuckDBDataChunk)(this.chunk);
  }

  /** Creates the staging table (a TEMP table: private to `connection`, gone when it closes). */
  static async create(connection: DuckDBConnection, columns: readonly ColumnDef[]): Promise<BufferTable> {
    if (columns.length === 0) throw new Error('a table needs at least one column');
    const names = new Set<string>();
    for (const c of columns) {
      if (!c.name || names.has(c.name)) throw new Error(`column name ${JSON.stringify(c.name)} is empty or repeated`);
      names.add(c.name);
    }
    // Canonical type text: validates the types and keeps arbitrary strings out of the SQL.
    const types = columns.map((c) => parseSqlType(c.type));
    const canonical = columns.map((c, i) => ({ name: c.name, type: sqlTypeText(types[i]) }));
    const table = `panta_buffer_${process.pid}_${++tableCounter}`;
    await connection.run(`CREATE TEMP TABLE ${sqlIdent(table)} (${columnListSql(canonical)})`);
    const appender = await connection.createAppender(table, 'main', 'temp');
    return new BufferTable(connection, table, canonical, types, appender);
  }

  /**
   * Appends `count` rows (at most CHUNK_ROWS) given column by column: `columns[j][i]` is row i of column j,
   * in the forms vector-write.ts accepts.
   */
  appendChunk(columns: readonly ArrayLike<unknown>[], count: number): void {
    if (count === 0) return;
    if (count > CHUNK_ROWS) throw new Error(`appendChunk: ${count} rows > ${CHUNK_ROWS}`);
    if (columns.length !== this.types.length) throw new Error(`appendChunk: ${columns.length} columns for ${this.types.length}`);
    duckdb.data_chunk_reset(this.chunk);
    for (let j = 0; j < this.types.length; j++) {
      writeVector(duckdb.data_chunk_get_vector(this.chunk, j), this.types[j], columns[j], count, this.columns[j].name);
    }
    duckdb.data_chunk_set_size(this.chunk, count);
    this.appender.appendDataChunk(this.chunkWrapper);
  }

  /** Appends any number of rows given column by column, in chunks. */
  appendColumns(columns: readonly ArrayLike<unknown>[], rows: number): void {
    for (let start = 0; start < rows; start += CHUNK_ROWS) {
      const count = Math.min(CHUNK_ROWS, rows - start);
      this.appendChunk(start === 0 && count === rows ? columns : columns.map((c) => sliceOf(c, start, start + count)), count);
    }
  }

  /** Makes appended rows visible to queries. */
  flush(): void {
    this.appender.flushSync();
  }

  /** `COPY (SELECT * FROM table) TO path (options)`; flushes the appender first. */
  async copyTo(path: string, options: string): Promise<void> {
    this.flush();
    await this.connection.run(`COPY ${sqlIdent(this.table)} TO ${sqlString(path)} (${options})`);
  }

  /**
   * Empties the table. Drop-and-recreate rather than DELETE: deleted rows of an in-memory table are only
   * tombstoned, so a long run would keep every past part's memory.
   */
  async clear(): Promise<void> {
    this.appender.closeSync();
    await this.connection.run(`DROP TABLE ${sqlIdent(this.table)}`);
    await this.connection.run(`CREATE TEMP TABLE ${sqlIdent(this.table)} (${columnListSql(this.columns)})`);
    this.appender = await this.connection.createAppender(this.table, 'main', 'temp');
  }

  /** Drops the table (the connection stays open; its owner closes it). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      this.appender.closeSync();
    } catch {
      // An appender whose flush failed refuses to close cleanly; the table goes anyway.
    }
    await this.connection.run(`DROP TABLE IF EXISTS ${sqlIdent(this.table)}`);
  }
}

function sliceOf(c: ArrayLike<unknown>, start: number, end: number): ArrayLike<unknown> {
  if (Array.isArray(c)) return c.slice(start, end);
  if (ArrayBuffer.isView(c) && !(c instanceof DataView)) return (c as unknown as Int32Array).subarray(start, end);
  return Array.prototype.slice.call(c, start, end);
}
