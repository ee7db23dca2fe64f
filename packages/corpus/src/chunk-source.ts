import duckdb from '@duckdb/node-bindings';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { duckdbApi } from './duckdb-api.js';
import { sqlString } from './sql-text.js';
import type { ColumnDef } from './event-schema.js';
import { parseSqlType, toLogicalType, type SqlType } from './sql-type.js';

/** Rows per DuckDB data chunk (DuckDB's STANDARD_VECTOR_SIZE, 2048 in every release build). */
export const CHUNK_ROWS: number = duckdb.vector_size();

/**
 * Rows that live in JS, offered to DuckDB chunk by chunk. `fill` writes rows [start, start + count)
 * (count <= CHUNK_ROWS) into the data chunk's vectors, column by column (see vector-write.ts).
 */
export interface ChunkSource {
  /** The columns `fill` writes, in chunk order. */
  readonly columns: readonly ColumnDef[];
  readonly rows: number;
  fill(chunk: duckdb.DataChunk, types: readonly SqlType[], start: number, count: number): void;
  /**
   * What COPY selects from those columns (default `*`): e.g. a column list with constants spliced in as
   * typed literals, which DuckDB expands itself instead of JS writing the same value into every row.
   */
  readonly select?: string;
  /**
   * Rows per chunk (default and at most CHUNK_ROWS). Wide rows take smaller chunks: with a row group of one
   * chunk, the Parquet writer's buffers then hold a bounded number of list entries, not 2048 rows of them.
   */
  readonly chunkRows?: number;
}

const FUNCTION = 'panta_chunks';
const sources = new Map<number, { source: ChunkSource; types: SqlType[] }>();
let nextId = 0;

/**
 * `COPY (SELECT * FROM panta_chunks(id)) TO path (options)`: DuckDB pulls the rows straight from JS through
 * a table function, so nothing is staged in a DuckDB table first.
 *
 * Why: staging went through an Appender, whose flush (moving the rows into table storage, statistics
 * included) ran synchronously on the JS thread and cost more than filling the vectors; the COPY then read
 * the table back. Here the JS thread only fills each output chunk (DuckDB calls back into it, one hop per
 * 2048 rows) and the Parquet encoding runs on the thread executing the COPY.
 *
 * The scan is single-threaded and DuckDB preserves insertion order, so the file holds the rows in order.
 * The source must not change until the returned promise settles.
 */
export async function copySource(connection: DuckDBConnection, source: ChunkSource, path: string, options: string): Promise<void> {
  const id = ++nextId;
  sources.set(id, { source, types: source.columns.map((c) => parseSqlType(c.type)) });
  try {
    await connection.run(`COPY (SELECT ${source.select ?? '*'} FROM ${FUNCTION}(${id})) TO ${sqlString(path)} (${options})`);
  } finally {
    sources.delete(id);
  }
}

/**
 * Registers panta_chunks on a database (once per instance: table functions live in its catalog). The
 * callbacks run on the JS thread, called from DuckDB's threads; a throw fails the query with its message.
 */
export async function registerChunkSource(db: DuckDBInstance): Promise<void> {
  const connection = await db.connect();
  try {
    // node-api's wrapper owns the handle; the callbacks use the raw bindings (no wrapper objects per chunk).
    const wrapper = new (duckdbApi().DuckDBTableFunction)();
    const tf = wrapper.table_function;
    duckdb.table_function_set_name(tf, FUNCTION);
    duckdb.table_function_add_parameter(tf, duckdb.create_logical_type(duckdb.Type.BIGINT));
    duckdb.table_function_set_bind(tf, (info) => {
      const id = Number(duckdb.get_int64(duckdb.bind_get_parameter(info, 0)));
      const entry = sources.get(id);
      if (!entry) throw new Error(`${FUNCTION}: no source ${id}`);
      entry.source.columns.forEach((c, j) => duckdb.bind_add_result_column(info, c.name, toLogicalType(entry.types[j])));
      duckdb.bind_set_cardinality(info, entry.source.rows, true);
      duckdb.bind_set_bind_data(info, { id });
    });
    duckdb.table_function_set_init(tf, (info) => {
      duckdb.init_set_max_threads(info, 1);
      duckdb.init_set_init_data(info, { next: 0 });
    });
    duckdb.table_function_set_function(tf, (info, output) => {
      const { id } = duckdb.function_get_bind_data(info) as { id: number };
      const state = duckdb.function_get_init_data(info) as { next: number };
      const entry = sources.get(id);
      if (!entry) throw new Error(`${FUNCTION}: source ${id} is gone`);
      const count = Math.min(entry.source.chunkRows ?? CHUNK_ROWS, entry.source.rows - state.next);
      if (count > 0) entry.source.fill(output, entry.types, state.next, count);
      duckdb.data_chunk_set_size(output, Math.max(0, count));
      state.next += Math.max(0, count);
    });
    connection.registerTableFunction(wrapper);
  } finally {
    connection.closeSync();
  }
}
