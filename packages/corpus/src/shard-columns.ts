import { BufferTable } from './buffer-table.js';
import { tmpName } from './corpus-paths.js';
import { readParquetSql, sqlIdent, sqlString, withConnection } from './duckdb.js';
import { CREATED_AT_COLUMN, type ColumnDef } from './event-schema.js';
import { SHARD_COPY_OPTIONS, shardRowGroupRows } from './event-shard-writer.js';
import { commitFile, removeQuietly } from './fs-durable.js';
import { queryRows } from './parquet-table.js';

/**
 * Post-hoc passes (`panta embed`, `panta judge`) add one column to a finalized shard: the shard is copied
 * with the column to a temporary file beside it, which is fsynced and renamed over it, so a shard is at any
 * moment either as it was or complete with the column (a pass killed mid-way leaves a stray .tmp at most).
 */

/** The column names of a Parquet file, in file order. */
export async function parquetColumnNames(file: string): Promise<string[]> {
  const rows = await queryRows(`DESCRIBE SELECT * FROM ${readParquetSql([file])}`);
  return rows.map((r) => String(r.column_name));
}

/**
 * Where a column goes in an event shard (docs/DESIGN.md#event-rows): in place when the shard holds it already (a
 * replace); an `emb_` column after the last embedding, so a shard re-embedded with encoder B equals one a
 * sweep wrote with encoders A, B; a `tag_` column after the embeddings and earlier tags; created_at last.
 */
export function shardColumnOrder(existing: readonly string[], column: string): string[] {
  if (existing.includes(column)) return [...existing];
  const isEmb = column.startsWith('emb_');
  const kind = (name: string) => (name.startsWith('emb_') ? 1 : name.startsWith('tag_') ? 2 : name === CREATED_AT_COLUMN.name ? 3 : 0);
  const rank = isEmb ? 1 : 2;
  // After every column of its rank or below: base columns, then embeddings, then tags.
  let at = 0;
  existing.forEach((name, i) => {
    if (kind(name) <= rank) at = i + 1;
  });
  return [...existing.slice(0, at), column, ...existing.slice(at)];
}

/**
 * Rewrites `file` with `column` set to `values` (row i of the file gets values[i]; null is SQL NULL), placed
 * by shardColumnOrder, through a temporary file and an atomic rename. Rows keep their file order.
 */
export async function writeShardColumn(file: string, column: ColumnDef, values: ArrayLike<unknown>): Promise<void> {
  const existing = await parquetColumnNames(file);
  const [stats] = await queryRows(
    `SELECT count(*)::BIGINT AS rows, coalesce(max(len(neighbours) + len(read_versions)), 0)::BIGINT AS widest FROM ${readParquetSql([file])}`,
  );
  const rows = Number(stats?.rows);
  if (rows !== values.length) throw new Error(`${file} holds ${rows} rows, ${values.length} values given for ${column.name}`);
  const order = shardColumnOrder(existing, column.name);
  const tmp = tmpName(file);
  const index = Int32Array.from({ length: rows }, (_, i) => i);
  try {
    await withConnection(async (con) => {
      const staged = await BufferTable.create(con, [
        { name: 'panta_row', type: 'INTEGER' },
        { name: 'panta_value', type: column.type },
      ]);
      try {
        staged.appendColumns([index, values], rows);
        staged.flush();
        const select = order
          .map((name) => (name === column.name ? `v.panta_value AS ${sqlIdent(name)}` : `s.${sqlIdent(name)}`))
          .join(', ');
        // file_row_number ties each value to its row whatever order the scan and the join produce.
        await con.run(
          `COPY (SELECT ${select} FROM read_parquet(${sqlString(file)}, file_row_number = true) s JOIN ${sqlIdent(staged.table)} v ON s.file_row_number = v.panta_row ORDER BY s.file_row_number) TO ${sqlString(tmp)} (${SHARD_COPY_OPTIONS}, ROW_GROUP_SIZE ${shardRowGroupRows(Number(stats?.widest))})`,
        );
      } finally {
        await staged.close();
      }
    });
    await commitFile(tmp, file);
  } catch (err) {
    await removeQuietly(tmp);
    throw err;
  }
}
