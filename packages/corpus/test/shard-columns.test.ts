import { describe, expect, it } from 'vitest';
import { EventShardWriter, sha256File, shardColumnOrder, writeShardColumn } from '../src/index.js';
import { ENCODERS, independentDuckDB, makeRow, q, tempDir } from './helpers.js';

const BASE = ['run_id', 'event', 'tag'];

describe('a shard rewritten with one more column', () => {
  it('places an embedding after the embeddings, a tag column after them, a column it has in place, created_at last', () => {
    const existing = [...BASE, 'emb_a', 'tag_x', 'created_at'];
    expect(shardColumnOrder(existing, 'emb_b')).toEqual([...BASE, 'emb_a', 'emb_b', 'tag_x', 'created_at']);
    expect(shardColumnOrder(existing, 'tag_y')).toEqual([...BASE, 'emb_a', 'tag_x', 'tag_y', 'created_at']);
    expect(shardColumnOrder(existing, 'emb_a')).toEqual(existing);
    expect(shardColumnOrder([...BASE, 'created_at'], 'emb_a')).toEqual([...BASE, 'emb_a', 'created_at']);
  });

  it('keeps every row and column as it was, in file order, with the new values beside their rows; a count that does not match changes nothing', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const w = await EventShardWriter.open({ dir, runId: 'r', encoders: ENCODERS, partRows: 700 });
      const rows = 2500;
      for (let e = 0; e < rows; e++) await w.append(makeRow('r', e));
      const shard = await w.finalize();
      const { con, close } = await independentDuckDB();
      const read = async (sql: string) => (await con.runAndReadAll(sql)).getRowObjectsJson();
      try {
        const before = await read(`SELECT * FROM read_parquet(${q(shard)}) ORDER BY event`);
        const sum = await sha256File(shard);
        await expect(writeShardColumn(shard, { name: 'tag_x', type: 'VARCHAR' }, ['correct'])).rejects.toThrow(/2500 rows, 1 values/);
        expect(await sha256File(shard)).toBe(sum);

        // Row i gets a vector of i, every third row none (as a protocol call carries no embedding).
        const values = Array.from({ length: rows }, (_, i) => (i % 3 === 2 ? null : Float32Array.from([i, -i])));
        await writeShardColumn(shard, { name: 'emb_new', type: 'FLOAT[]' }, values);
        const columns = (await read(`DESCRIBE SELECT * FROM read_parquet(${q(shard)})`)).map((r) => r.column_name);
        expect(columns.slice(-4)).toEqual(['emb_minilm', 'emb_tiny', 'emb_new', 'created_at']);
        expect(await read(`SELECT * EXCLUDE (emb_new) FROM read_parquet(${q(shard)}) ORDER BY event`)).toEqual(before);
        const added = await read(
          `SELECT event::INTEGER AS event, emb_new FROM read_parquet(${q(shard)}, file_row_number = true) ORDER BY file_row_number`,
        );
        expect(added.map((r) => r.event)).toEqual(Array.from({ length: rows }, (_, i) => i));
        expect(added[1].emb_new).toEqual([1, -1]);
        expect(added[2].emb_new).toBeNull();
        expect(added[2497].emb_new).toEqual([2497, -2497]);
      } finally {
        close();
      }
    } finally {
      await cleanup();
    }
  });
});
