import type * as Api from '@duckdb/node-api';

/**
 * @duckdb/node-api, loaded with the first DuckDB instance (getDuckDB) rather than with this package: its 181
 * modules were about a third of what every `panta` process loaded at start, and a worker or a scheduler never
 * opens DuckDB. The raw bindings (@duckdb/node-bindings, one module) stay a static import.
 */
let api: typeof Api | undefined;

export async function loadDuckDBApi(): Promise<typeof Api> {
  api ??= await import('@duckdb/node-api');
  return api;
}

/** The loaded API, for code that runs only on a DuckDB instance's connections and results. */
export function duckdbApi(): typeof Api {
  if (!api) throw new Error('@duckdb/node-api used before getDuckDB() loaded it');
  return api;
}
