import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineTable, queryRows, readEvents, sqlString, writeParquetTable, type ColumnDecl } from '@panta/corpus';
import { independentDuckDB, q, tempDirPerTest } from './helpers.js';

let dir: string;
tempDirPerTest((d) => {
  dir = d;
});

const TABLE = defineTable('t', [
  { name: 'run_id', type: 'VARCHAR', nullable: true },
  { name: 'sweep', type: 'INTEGER', nullable: true },
  { name: 'events', type: 'BIGINT', nullable: true },
  { name: 'rho', type: 'DOUBLE', nullable: true },
  { name: 'stopped_early', type: 'BOOLEAN', nullable: true },
  { name: 'started', type: 'TIMESTAMP', nullable: true },
  { name: 'mean', type: 'DOUBLE[3]', nullable: true },
  { name: 'history', type: 'DOUBLE[]', nullable: true },
  { name: 'labels', type: 'VARCHAR[]', nullable: true },
]);

/** A table as a test of bad input declares it: no type checks, so the writer's own checks are what is tested. */
const loose = (columns: readonly { name: string; type: string }[]) => defineTable('bad', columns as readonly ColumnDecl[]);

describe('writeParquetTable / queryRows', () => {
  it('round-trips row objects with NULLs, lists and fixed-size arrays', async () => {
    const path = join(dir, 'whitening', "q'1__minilm.parquet");
    const rows = [
      {
        run_id: 'a',
        sweep: 0,
        events: 2 ** 40,
        rho: 0.25,
        stopped_early: false,
        started: new Date(1_700_000_000_123),
        mean: [1, 2.5, -3],
        history: [0.5],
        labels: ['x', 'y'],
      },
      {
        run_id: "o'brien ✓",
        sweep: 7,
        events: 0,
        rho: null,
        stopped_early: true,
        started: 1_700_000_000_000,
        mean: null,
        history: [],
        labels: [],
      },
      {
        run_id: null,
        sweep: null,
        events: null,
        rho: Number.NaN,
        stopped_early: null,
        started: null,
        mean: Float64Array.from([0, 0, 1]),
        history: null,
        labels: null,
      },
    ];
    await writeParquetTable(path, TABLE, rows);
    expect(await readdir(join(dir, 'whitening'))).toEqual(["q'1__minilm.parquet"]);

    const back = await queryRows(`SELECT * FROM read_parquet(${sqlString(path)})`);
    expect(back[0]).toEqual({ ...rows[0], started: new Date(1_700_000_000_123) });
    expect(back[1]).toEqual({ ...rows[1], started: new Date(1_700_000_000_000) });
    expect(back[2]).toMatchObject({
      run_id: null,
      sweep: null,
      events: null,
      stopped_early: null,
      started: null,
      mean: [0, 0, 1],
      history: null,
      labels: null,
    });
    expect(back[2].rho).toBeNaN();
    expect(typeof back[0].events).toBe('number');

    const { con, close } = await independentDuckDB();
    try {
      const types = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${q(path)})`)).getRows().map((r) => `${r[0]} ${r[1]}`);
      expect(types).toEqual([
        'run_id VARCHAR',
        'sweep INTEGER',
        'events BIGINT',
        'rho DOUBLE',
        'stopped_early BOOLEAN',
        'started TIMESTAMP',
        'mean DOUBLE[]',
        'history DOUBLE[]',
        'labels VARCHAR[]',
      ]);
      const codecs = (await con.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata(${q(path)})`)).getRows().map((r) => r[0]);
      expect(codecs).toEqual(['ZSTD']);
    } finally {
      close();
    }
  });

  it('accepts columnar data, including typed arrays, across several chunks', async () => {
    const n = 5000;
    const path = join(dir, 'order_params.parquet');
    await writeParquetTable(
      path,
      defineTable('order_params', [
        { name: 'sweep', type: 'INTEGER' },
        { name: 'm', type: 'DOUBLE' },
        { name: 'encoder', type: 'VARCHAR' },
      ]),
      {
        sweep: Int32Array.from({ length: n }, (_, i) => i),
        m: Float64Array.from({ length: n }, (_, i) => i / 3),
        encoder: Array.from({ length: n }, (_, i) => (i % 2 ? 'minilm' : 'hashing')),
      },
    );
    const [agg] = await queryRows(
      `SELECT count(*) AS c, sum(sweep) AS s, max(m) AS m, count(DISTINCT encoder) AS e FROM read_parquet(${sqlString(path)})`,
    );
    expect(agg).toEqual({ c: n, s: (n * (n - 1)) / 2, m: (n - 1) / 3, e: 2 });
    // The generic reader handles any Parquet file, not only event shards.
    let rows = 0;
    for await (const b of readEvents(path, { columns: ['sweep', 'encoder'], where: 'sweep >= 100', batchRows: 1000 })) {
      expect((b.columns.sweep as number[])[0]).toBe(100 + rows);
      rows += b.rows;
    }
    expect(rows).toBe(n - 100);
  });

  it('refuses bad input before writing anything', async () => {
    const path = join(dir, 'bad.parquet');
    await expect(writeParquetTable(path, loose([{ name: 'x', type: 'INTEGER' }]), [{ x: 1.5 }])).rejects.toThrow(
      /column x, row 0: expected a 32-bit integer/,
    );
    await expect(writeParquetTable(path, loose([{ name: 'x', type: 'INTEGER' }]), [{ y: 1 }])).rejects.toThrow(/row 0 has no column x/);
    await expect(writeParquetTable(path, loose([{ name: 'x', type: 'INTEGER' }]), [{ x: 1 }, { x: null }])).rejects.toThrow(
      'bad: column x, row 1: NULL, and the column is not declared nullable',
    );
    await expect(writeParquetTable(path, loose([{ name: 'x', type: 'MAP(INT, INT)' }]), [])).rejects.toThrow(/unsupported column type/);
    await expect(writeParquetTable(path, loose([{ name: 'v', type: 'DOUBLE[2]' }]), [{ v: [1, 2, 3] }])).rejects.toThrow(
      /expected 2 values, got 3/,
    );
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('reading vectors', () => {
  // readEvents hands out the embedding column as the bindings' copy of the vector memory, without copying it
  // again: that is only safe while vector_get_data copies. If the bindings ever return a view over DuckDB's
  // memory (freed at the next chunk), this fails first.
  it("vector_get_data returns a copy that outlives the chunk, not a view of DuckDB's memory", async () => {
    const { openConnection } = await import('../src/duckdb.js');
    const duckdb = (await import('@duckdb/node-bindings')).default;
    const con = await openConnection();
    try {
      const result = await con.stream('SELECT range::FLOAT AS x FROM range(4096)');
      const first = await result.fetchChunk();
      const vector = duckdb.data_chunk_get_vector(first!.chunk, 0);
      const a = duckdb.vector_get_data(vector, 16);
      const b = duckdb.vector_get_data(vector, 16);
      expect(a.buffer).not.toBe(b.buffer);
      new Float32Array(a.buffer, a.byteOffset, 4).fill(-1);
      expect(Array.from(new Float32Array(b.buffer, b.byteOffset, 4))).toEqual([0, 1, 2, 3]);
      await result.fetchChunk();
      expect(Array.from(new Float32Array(a.buffer, a.byteOffset, 4))).toEqual([-1, -1, -1, -1]);
    } finally {
      con.closeSync();
    }
  });
});
