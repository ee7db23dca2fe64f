import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineTable, writeParquetTable } from '@panta/corpus';
import { independentDuckDB, q, tempDirPerTest } from './helpers.js';

let dir: string;
tempDirPerTest((d) => {
  dir = d;
});

describe('undefined numbers in small tables', () => {
  it('a null inside a list (an undefined FOCUS value) is a NULL element, read back as NULL by another DuckDB', async () => {
    const path = join(dir, 'runs.parquet');
    const rows = [
      { run_id: 'a', focus: [null, 0.25, null], ids: [1, null], big: [2 ** 40, null], flags: [true, null] },
      { run_id: 'b', focus: [0.5], ids: [], big: null, flags: [] },
      { run_id: 'c', focus: null, ids: [null], big: [null], flags: null },
      { run_id: 'd', focus: Float64Array.of(0.125, -1), ids: Int32Array.of(7), big: [3], flags: [false] },
    ];
    await writeParquetTable(
      path,
      defineTable('runs', [
        { name: 'run_id', type: 'VARCHAR' },
        { name: 'focus', type: 'DOUBLE[]', nullable: true },
        { name: 'ids', type: 'INTEGER[]' },
        { name: 'big', type: 'BIGINT[]', nullable: true },
        { name: 'flags', type: 'BOOLEAN[]', nullable: true },
      ]),
      rows,
    );
    const { con, close } = await independentDuckDB();
    try {
      const read = async (sql: string) => (await con.runAndReadAll(sql)).getRowsJS();
      expect(
        await read(
          `SELECT run_id, focus::VARCHAR, ids::VARCHAR, big::VARCHAR, flags::VARCHAR FROM read_parquet(${q(path)}) ORDER BY run_id`,
        ),
      ).toEqual([
        ['a', '[NULL, 0.25, NULL]', '[1, NULL]', '[1099511627776, NULL]', '[true, NULL]'],
        ['b', '[0.5]', '[]', null, '[]'],
        ['c', null, '[NULL]', '[NULL]', null],
        ['d', '[0.125, -1.0]', '[7]', '[3]', '[false]'],
      ]);
      // The elements are SQL NULLs, not zeros: aggregates skip them.
      expect(await read(`SELECT count(f), sum(f) FROM (SELECT unnest(focus) AS f FROM read_parquet(${q(path)}))`)).toEqual([
        [4n, 0.25 + 0.5 + 0.125 - 1],
      ]);
    } finally {
      close();
    }
  });

  it('NULL elements of one chunk do not leak into the next (the chunk and its list child are reused)', async () => {
    const path = join(dir, 'chunks.parquet');
    const n = 5000;
    const focus = Array.from({ length: n }, (_, i) => (i < 2048 ? [null, null] : [1, 2]));
    await writeParquetTable(path, defineTable('chunks', [{ name: 'focus', type: 'DOUBLE[]' }]), { focus });
    const { con, close } = await independentDuckDB();
    try {
      const [[nulls, values]] = (
        await con.runAndReadAll(
          `SELECT count(*) FILTER (WHERE f IS NULL), count(f) FROM (SELECT unnest(focus) AS f FROM read_parquet(${q(path)}))`,
        )
      ).getRowsJS();
      expect([nulls, values]).toEqual([2n * 2048n, 2n * BigInt(n - 2048)]);
    } finally {
      close();
    }
  });
});
