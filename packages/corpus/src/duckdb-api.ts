import { createRequire } from 'node:module';
import type * as Api from '@duckdb/node-api';

/**
 * @duckdb/node-api, loaded with the first DuckDB instance (getDuckDB) rather than with this package: its 181
 * modules were about a third of what every `panta` process loaded at start, and a worker or a scheduler never
 * opens DuckDB. The raw bindings (@duckdb/node-bindings, one module) stay a static import. It is CommonJS and
 * required rather than imported: an ESM import runs Node's CJS lexer over each of its re-exported modules to find
 * their names, 500-560 ms of CPU against 180-290 for require() in a fresh process (bench/NOTES.md: CommonJS
 * packages required). Both give the same module instance.
 */
let api: typeof Api | undefined;

const require = createRequire(import.meta.url);

export async function loadDuckDBApi(): Promise<typeof Api> {
  api ??= require('@duckdb/node-api') as typeof Api;
  return api;
}

/** The loaded API, for code that runs only on a DuckDB instance's connections and results. */
export function duckdbApi(): typeof Api {
  if (!api) throw new Error('@duckdb/node-api used before getDuckDB() loaded it');
  return api;
}
