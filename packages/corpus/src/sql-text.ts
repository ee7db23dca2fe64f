// SQL text Panta splices into DuckDB queries: a file of names that imports nothing, so that every module of the
// package can quote a path without importing the DuckDB connection (duckdb.ts imports the chunk source, which quotes).

/** A SQL string literal: single quotes doubled. For file paths and values spliced into SQL text. */
export function sqlString(s: string): string {
  if (s.includes('\0')) throw new Error(`sqlString: NUL byte in ${JSON.stringify(s)}`);
  return `'${s.replaceAll("'", "''")}'`;
}

/** A SQL identifier: double quotes doubled. Column names are validated upstream, but quoting costs nothing. */
export function sqlIdent(s: string): string {
  if (s.includes('\0')) throw new Error(`sqlIdent: NUL byte in ${JSON.stringify(s)}`);
  return `"${s.replaceAll('"', '""')}"`;
}

/** `read_parquet([...])` over one or more files, in the order given. */
export function readParquetSql(files: readonly string[]): string {
  if (files.length === 0) throw new Error('readParquetSql: no files');
  return `read_parquet([${files.map(sqlString).join(', ')}])`;
}
