import './allocator.js';
import { availableParallelism } from 'node:os';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { loadDuckDBApi } from './duckdb-api.js';
import { registerChunkSource } from './chunk-source.js';

export { readParquetSql, sqlIdent, sqlString } from './sql-text.js';

/**
 * One in-memory DuckDB instance per process. DuckDB is only our Parquet codec and query engine here: every
 * durable byte lives in Parquet files, so nothing needs a database file. One instance (not one per writer)
 * keeps a single thread pool and a single memory budget however many runs write at once.
 */
let instance: Promise<DuckDBInstance> | undefined;
let shared: Promise<DuckDBConnection> | undefined;

/**
 * DuckDB's worker threads: one per core but one, at most 8. The engine's event loop needs a core of its
 * own, and parallelism does not need DuckDB's pool: every COPY of a part runs on a libuv thread of its
 * own, several at once. Worse, while a query's pipeline runs on a pool thread, the thread that issued it
 * (a libuv thread) polls for completion: with single-threaded pipelines (a part pulled from JS) that
 * burns CPU the engine needs on a small machine (bench/NOTES.md: DuckDB's threads).
 * PANTA_DUCKDB_THREADS overrides.
 */
export function duckdbThreads(): number {
  const env = Number(process.env.PANTA_DUCKDB_THREADS);
  if (Number.isInteger(env) && env > 0) return env;
  return Math.max(1, Math.min(8, availableParallelism() - 1));
}

/** The process-wide instance, created on first use. */
export function getDuckDB(): Promise<DuckDBInstance> {
  instance ??= loadDuckDBApi()
    .then(({ DuckDBInstance }) =>
      DuckDBInstance.create(':memory:', {
        threads: String(duckdbThreads()),
        // Shard merging and reading rely on rows leaving a scan in file order; this is DuckDB's default, made
        // explicit because correctness (event order) depends on it.
        preserve_insertion_order: 'true',
        // Every Parquet file is read about once (a merge, the final measurement, verify): caching the bytes read
        // only grows memory, by the shard's size on a merge (bench/NOTES.md: DuckDB's file cache).
        enable_external_file_cache: 'false',
      }),
    )
    .then(async (db) => {
      // Writers COPY rows to Parquet straight from JS (chunk-source.ts).
      await registerChunkSource(db);
      return db;
    })
    .catch((err: unknown) => {
      instance = undefined;
      throw err;
    });
  return instance;
}

/**
 * The process-wide shared connection, for short materialised queries. Anything that streams a result or
 * holds an appender must use its own connection (`openConnection`): a new query on a connection
 * invalidates that connection's pending streaming result.
 */
export function getConnection(): Promise<DuckDBConnection> {
  shared ??= getDuckDB()
    .then((db) => db.connect())
    .catch((err: unknown) => {
      shared = undefined;
      throw err;
    });
  return shared;
}

/** A private connection on the shared instance (cheap); the caller closes it with `closeSync()`. */
export async function openConnection(): Promise<DuckDBConnection> {
  return (await getDuckDB()).connect();
}

/** Runs `fn` on a private connection and always closes it. */
export async function withConnection<T>(fn: (con: DuckDBConnection) => Promise<T>): Promise<T> {
  const con = await openConnection();
  try {
    return await fn(con);
  } finally {
    con.closeSync();
  }
}

/**
 * Closes the shared connection and instance (tests, shutdown). Connections opened with `openConnection`
 * must be closed by their owners first. The next use creates a fresh instance.
 */
export async function closeDuckDB(): Promise<void> {
  const con = shared;
  const db = instance;
  shared = undefined;
  instance = undefined;
  if (con) (await con).closeSync();
  if (db) (await db).closeSync();
}
