import { existsSync } from 'node:fs';
import { readdir, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventRow } from '@panta/core';
import {
  EVENT_BASE_COLUMNS,
  EventShardWriter,
  eventColumns,
  listParts,
  partsDir,
  readEvents,
  shardPath,
  shardProgress,
  type ColumnBatch,
} from '@panta/corpus';
import { ENCODERS, independentDuckDB, makeRow, q, rowGroupRows, tempDirPerTest } from './helpers.js';

const RUN = 'q1-meanfield-n4097-T0.7-glauber-t0';

let dir: string;
tempDirPerTest((d) => {
  dir = d;
});

async function writeRun(
  runId: string,
  n: number,
  opts: { partRows?: number; big?: Set<number>; finalize?: boolean } = {},
): Promise<EventShardWriter> {
  const w = await EventShardWriter.open({ dir, runId, encoders: ENCODERS, partRows: opts.partRows ?? 100 });
  for (let e = 0; e < n; e++) await w.append(makeRow(runId, e, ENCODERS, opts.big));
  if (opts.finalize ?? true) await w.finalize();
  return w;
}

async function readAll(files: string | string[], batchRows?: number): Promise<ColumnBatch[]> {
  const out: ColumnBatch[] = [];
  for await (const b of readEvents(files, { batchRows })) out.push(b);
  return out;
}

/** Checks every column of every row of the batches against makeRow, in event order from `from`. */
function expectRows(batches: ColumnBatch[], runId: string, from: number, to: number, big: Set<number> = new Set()): void {
  let e = from;
  for (const b of batches) {
    for (let r = 0; r < b.rows; r++, e++) {
      const want = makeRow(runId, e, ENCODERS, big);
      for (const c of EVENT_BASE_COLUMNS) {
        const got = b.columns[c.name][r];
        const exp = want[c.name as keyof EventRow];
        if (c.name === 'neighbours') {
          expect(got).toBeInstanceOf(Int32Array);
          expect(Array.from(got as Int32Array)).toEqual(Array.from(exp as Int32Array));
        } else if (c.name === 'read_versions') {
          expect(got).toBeInstanceOf(Float64Array);
          expect(Array.from(got as Float64Array)).toEqual(Array.from(exp as Float64Array));
        } else {
          expect(got, `${c.name} of event ${e}`).toBe(exp);
        }
      }
      for (const enc of ENCODERS) {
        const col = b.columns[`emb_${enc.name}`] as Float32Array;
        expect(col).toBeInstanceOf(Float32Array);
        expect(b.dims[`emb_${enc.name}`]).toBe(enc.dim);
        expect(col.length).toBe(b.rows * enc.dim);
        const got = col.subarray(r * enc.dim, (r + 1) * enc.dim);
        // Exact float32 bits, not approximately equal.
        expect(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(Buffer.from(want.embeddings[enc.name].buffer))).toBe(true);
      }
      expect(b.columns.created_at[r]).toBe(want.created_at);
    }
  }
  expect(e).toBe(to);
}

describe('EventShardWriter round trip', () => {
  it('writes parts, finalizes one ZSTD shard, and reads back exactly (own reader and independent SQL)', async () => {
    const n = 1050;
    const big = new Set([3, 777]);
    const w = await EventShardWriter.open({ dir, runId: RUN, encoders: ENCODERS, partRows: 100 });
    for (let e = 0; e < n; e++) await w.append(makeRow(RUN, e, ENCODERS, big));
    await w.flush();
    // Durable parts before finalize: 10 full parts and the 50-row remainder, each under its first event.
    const parts = await listParts(dir, RUN);
    expect(parts.map((p) => p.split('/').pop())).toContain('part-000000001000.parquet');
    expect(parts).toHaveLength(11);
    // The reader takes parts just as well as shards.
    expectRows(await readAll(parts, 512), RUN, 0, n, big);

    const shard = await w.finalize();
    expect(shard).toBe(shardPath(dir, RUN));
    expect(existsSync(partsDir(dir, RUN))).toBe(false);
    expect((await readdir(join(dir, 'events'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    // Own reader, batches that do not line up with DuckDB's 2048-row chunks.
    const batches = await readAll(shard, 333);
    expect(batches.map((b) => b.rows)).toEqual([333, 333, 333, 51]);
    expectRows(batches, RUN, 0, n, big);

    // Independent check in a DuckDB of its own.
    const { con, close } = await independentDuckDB();
    try {
      const described = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${q(shard)})`)).getRows();
      expect(described.map((r) => r[0])).toEqual(eventColumns(ENCODERS).map((c) => c.name));
      const types = Object.fromEntries(described.map((r) => [r[0], r[1]]));
      expect(types).toMatchObject({
        trial: 'INTEGER',
        seed: 'BIGINT',
        event: 'BIGINT',
        neighbours: 'INTEGER[]',
        read_versions: 'BIGINT[]',
        temperature: 'DOUBLE',
        created_at: 'TIMESTAMP',
      });
      // Parquet has no fixed-size list: the FLOAT[d] column comes back as FLOAT[] with every row of length d,
      // and casts back to FLOAT[384] losslessly.
      expect(types.emb_minilm).toBe('FLOAT[]');
      const lens = (
        await con.runAndReadAll(
          `SELECT min(len(emb_minilm)), max(len(emb_minilm)), min(len(emb_tiny)), max(len(emb_tiny)), typeof(any_value(emb_minilm::FLOAT[384])) FROM read_parquet(${q(shard)})`,
        )
      ).getRows()[0];
      expect(lens).toEqual([384n, 384n, 8n, 8n, 'FLOAT[384]']);

      const row = (
        await con.runAndReadAll(
          `SELECT seed, event, len(neighbours), neighbours[4096], len(read_versions), read_versions[4097], emb_minilm[1], emb_tiny[8], epoch_ms(created_at), response, tag
           FROM read_parquet(${q(shard)}) WHERE event = 777`,
        )
      ).getRows()[0];
      const want = makeRow(RUN, 777, ENCODERS, big);
      expect(row).toEqual([
        BigInt(want.seed),
        777n,
        4096n,
        want.neighbours[4095],
        4097n,
        BigInt(2 ** 40 + 777),
        want.embeddings.minilm[0],
        want.embeddings.tiny[7],
        BigInt(want.created_at),
        want.response,
        want.tag,
      ]);
      const small = (
        await con.runAndReadAll(`SELECT neighbours, read_versions FROM read_parquet(${q(shard)}) WHERE event = 1`)
      ).getRowsJS()[0];
      expect(small).toEqual([
        [1, 4, -2],
        [0n, BigInt(2 ** 33 + 1), 0n],
      ]);
      // Rows in event order in the file itself.
      const ordered = (
        await con.runAndReadAll(
          `SELECT bool_and(event = rn - 1) FROM (SELECT event, row_number() OVER () AS rn FROM read_parquet(${q(shard)}))`,
        )
      ).getRows()[0][0];
      expect(ordered).toBe(true);
      const codecs = (await con.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata(${q(shard)})`)).getRows().map((r) => r[0]);
      expect(codecs).toEqual(['ZSTD']);
    } finally {
      close();
    }
  });

  it('finalizes in row groups of 16384 rows', async () => {
    const enc = [{ name: 'tiny', dim: 8 }];
    const w = await EventShardWriter.open({ dir, runId: 'rg', encoders: enc, partRows: 4096 });
    for (let e = 0; e < 17000; e++) await w.append(makeRow('rg', e, enc));
    expect(await rowGroupRows(await w.finalize())).toEqual([16384, 616]);
  });

  it('writes rows with long read lists in small row groups, in a part and in a merged shard', async () => {
    // 8,193 list entries a row (4,096 neighbours, 4,097 reads): 64 rows a row group in a part, so that the
    // Parquet writer never holds 2,048 rows of them (16 M entries); a merge reads 2,048-row chunks.
    const enc = [{ name: 'tiny', dim: 8 }];
    const all = new Set(Array.from({ length: 3000 }, (_, e) => e));
    const rowGroups = async (runId: string, partRows: number) => {
      const w = await EventShardWriter.open({ dir, runId, encoders: enc, partRows });
      for (let e = 0; e < 3000; e++) await w.append(makeRow(runId, e, enc, all));
      const shard = await w.finalize();
      const { con, close } = await independentDuckDB();
      try {
        const reads = (
          await con.runAndReadAll(`SELECT sum(len(read_versions))::DOUBLE, sum(len(neighbours))::DOUBLE FROM read_parquet(${q(shard)})`)
        ).getRows()[0];
        expect(reads).toEqual([3000 * 4097, 3000 * 4096]);
      } finally {
        close();
      }
      return rowGroupRows(shard);
    };
    const single = await rowGroups('wide-one', 4096);
    expect(single.length).toBe(Math.ceil(3000 / 64));
    expect(Math.max(...single)).toBe(64);
    // Merged: about one 2,048-row chunk a row group (a scan's chunks follow the parts' row groups), not 16,384.
    const merged = await rowGroups('wide-merged', 1000);
    expect(merged.length).toBe(2);
    expect(Math.max(...merged)).toBeLessThan(2048 + 64);
  });

  it('writes an empty run as a shard with the full schema and no rows', async () => {
    const w = await EventShardWriter.open({ dir, runId: 'empty', encoders: ENCODERS });
    const shard = await w.finalize();
    expect(await readAll(shard)).toEqual([]);
    expect(await shardProgress(dir, 'empty')).toEqual({ finalized: true, parts: [], nextEvent: 0, discarded: [] });
    const { con, close } = await independentDuckDB();
    try {
      const described = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${q(shard)})`)).getRows();
      expect(described.map((r) => `${r[0]} ${r[1]}`)).toEqual(
        eventColumns(ENCODERS).map((c) => `${c.name} ${c.type.replace(/\[\d+\]$/, '[]')}`),
      );
      expect((await con.runAndReadAll(`SELECT count(*) FROM read_parquet(${q(shard)})`)).getRows()[0][0]).toBe(0n);
    } finally {
      close();
    }
  });
});

describe('EventShardWriter validation', () => {
  it('refuses an append that is not the next event', async () => {
    const w = await EventShardWriter.open({ dir, runId: RUN, encoders: ENCODERS });
    await expect(w.append(makeRow(RUN, 1))).rejects.toThrow(/event 1 appended, expected 0/);
    await w.append(makeRow(RUN, 0));
    await expect(w.append(makeRow(RUN, 2))).rejects.toThrow(/event 2 appended, expected 1/);
    await expect(w.append(makeRow(RUN, 0))).rejects.toThrow(/expected 1/);
    await w.append(makeRow(RUN, 1));
    expect(w.expectedEvent).toBe(2);
    await w.close();
  });

  it('starts from startEvent and refuses rows of another run or with a wrong embedding', async () => {
    const w = await EventShardWriter.open({ dir, runId: RUN, encoders: ENCODERS, startEvent: 5 });
    await expect(w.append(makeRow(RUN, 0))).rejects.toThrow(/expected 5/);
    await expect(w.append(makeRow('other', 5))).rejects.toThrow(/row of run "other"/);
    const bad = makeRow(RUN, 5);
    bad.embeddings.tiny = new Float32Array(7);
    await expect(w.append(bad)).rejects.toThrow(/embedding tiny has 7 values, expected 8/);
    await w.close();
    expect(() => eventColumns([{ name: 'Bad-Name', dim: 3 }])).toThrow(/not a valid column suffix/);
    await expect(EventShardWriter.open({ dir, runId: '../escape', encoders: ENCODERS })).rejects.toThrow(/cannot be a file name/);
  });

  it('surfaces a part write failure on the next call', async () => {
    const w = await EventShardWriter.open({ dir, runId: RUN, encoders: ENCODERS, partRows: 2 });
    const row = makeRow(RUN, 0);
    (row as unknown as Record<string, unknown>).trial = 1.5; // not an INTEGER: fails when the part is encoded
    await w.append(row);
    // The second row completes the part, whose write (DuckDB pulls the rows as it encodes them) fails in the
    // background: the next call reports it, and so does every later one.
    await w.append(makeRow(RUN, 1));
    await expect(w.flush()).rejects.toThrow(/column trial, row 0: expected a 32-bit integer, got number 1.5/);
    await expect(w.append(makeRow(RUN, 2))).rejects.toThrow(/trial/);
    await w.close();
    expect(await listParts(dir, RUN)).toEqual([]);
  });
});

describe('shardProgress', () => {
  it('reports nothing for a run never started', async () => {
    expect(await shardProgress(dir, RUN)).toEqual({ finalized: false, parts: [], nextEvent: 0, discarded: [] });
  });

  it('recovers to the previous part boundary when the last part is truncated, and the run resumes from there', async () => {
    const w = await writeRun(RUN, 1000, { finalize: false });
    await w.flush();
    // Read the parts once, so a cached copy could not hide the damage below.
    expect((await readAll(await listParts(dir, RUN))).reduce((s, b) => s + b.rows, 0)).toBe(1000);
    await w.close();
    const parts = await listParts(dir, RUN);
    expect(parts).toHaveLength(10);
    const last = parts[9];
    await truncate(last, Math.floor((await stat(last)).size / 2));
    await writeFile(join(partsDir(dir, RUN), 'part-000000001000.parquet.tmp'), 'half a write');

    const progress = await shardProgress(dir, RUN);
    expect(progress).toEqual({ finalized: false, parts: parts.slice(0, 9), nextEvent: 900, discarded: [last] });
    expect(await readdir(partsDir(dir, RUN))).toHaveLength(9);

    // Resume from nextEvent: the finalized shard is the complete, exact run.
    const resumed = await EventShardWriter.open({ dir, runId: RUN, encoders: ENCODERS, partRows: 100, startEvent: progress.nextEvent });
    for (let e = progress.nextEvent; e < 1000; e++) await resumed.append(makeRow(RUN, e));
    const shard = await resumed.finalize();
    expectRows(await readAll(shard), RUN, 0, 1000);
    expect(await shardProgress(dir, RUN)).toEqual({ finalized: true, parts: [], nextEvent: 1000, discarded: [] });
  });

  it('drops a corrupt middle part and everything after it', async () => {
    const w = await writeRun(RUN, 1000, { finalize: false });
    await w.flush();
    await w.close();
    const parts = await listParts(dir, RUN);
    await truncate(parts[4], 100);
    const progress = await shardProgress(dir, RUN);
    expect(progress).toEqual({ finalized: false, parts: parts.slice(0, 4), nextEvent: 400, discarded: parts.slice(4) });
    expect(await listParts(dir, RUN)).toEqual(parts.slice(0, 4));
  });

  it('drops parts after a gap, and leftover parts of a finalized run', async () => {
    const w = await writeRun(RUN, 500, { finalize: false });
    await w.flush();
    await w.close();
    const parts = await listParts(dir, RUN);
    const { rm } = await import('node:fs/promises');
    await rm(parts[2]);
    expect(await shardProgress(dir, RUN)).toEqual({
      finalized: false,
      parts: parts.slice(0, 2),
      nextEvent: 200,
      discarded: parts.slice(3),
    });

    const other = 'done-run';
    await writeRun(other, 300);
    const { mkdir, copyFile } = await import('node:fs/promises');
    await mkdir(partsDir(dir, other), { recursive: true });
    await copyFile(parts[0], join(partsDir(dir, other), 'part-000000000000.parquet'));
    expect(await shardProgress(dir, other)).toEqual({ finalized: true, parts: [], nextEvent: 300, discarded: [] });
    expect(existsSync(partsDir(dir, other))).toBe(false);
    await expect(EventShardWriter.open({ dir, runId: other, encoders: ENCODERS })).rejects.toThrow(/already finalized/);
  });
});

describe('events with extra calls (protocol roles)', () => {
  /** Event e's rows: a judge call before it every 5th event, a merge call before its answer every 3rd. */
  function eventRows(e: number): EventRow[] {
    const agent = makeRow(RUN, e);
    const call = (role: EventRow['role']): EventRow => ({
      ...agent,
      role,
      tag: null,
      embeddings: null,
      persona: null,
      response: `${role} ${e}`,
      seed: e * 7 + role.length,
    });
    return [...(e % 5 === 0 ? [call('judge')] : []), ...(e % 3 === 0 ? [call('merge')] : []), agent];
  }

  it("keeps an event's rows together in one part, counts events (not rows) for a resume, and reads extra rows back with null tag and embeddings", async () => {
    const w = await EventShardWriter.open({ dir, runId: RUN, encoders: ENCODERS, partRows: 4 });
    for (let e = 0; e < 20; e++) await w.append(eventRows(e));
    await w.flush();
    await w.close();
    // Every part starts with an event's first row and ends with its answer.
    const { con, close } = await independentDuckDB();
    try {
      for (const part of await listParts(dir, RUN)) {
        const rows = (await con.runAndReadAll(`SELECT event::INTEGER AS event, role FROM read_parquet(${q(part)})`)).getRowObjectsJson();
        expect(rows.at(-1)!.role).toBe('agent');
        const first = Number(rows[0].event);
        expect(rows.filter((r) => Number(r.event) === first - 1)).toEqual([]);
      }
    } finally {
      close();
    }
    const progress = await shardProgress(dir, RUN);
    expect(progress.nextEvent).toBe(20);
    const resumed = await EventShardWriter.open({ dir, runId: RUN, encoders: ENCODERS, partRows: 4, startEvent: progress.nextEvent });
    for (let e = 20; e < 25; e++) await resumed.append(eventRows(e));
    await resumed.finalize();
    const batches: ColumnBatch[] = [];
    for await (const b of readEvents(shardPath(dir, RUN), { columns: ['event', 'role', 'tag', 'response'] })) batches.push(b);
    const roles = batches.flatMap((b) => b.columns.role as string[]);
    const expected = Array.from({ length: 25 }, (_, e) => eventRows(e).map((r) => r.role)).flat();
    expect(roles).toEqual(expected);
    const tags = batches.flatMap((b) => b.columns.tag as (string | null)[]);
    roles.forEach((role, i) => expect(tags[i] === null).toBe(role !== 'agent'));
    expect((await shardProgress(dir, RUN)).nextEvent).toBe(25);
    // Embeddings are read flat, so only answers' rows: the reader says so instead of inventing values.
    const all = readEvents(shardPath(dir, RUN), { columns: ['emb_tiny'] });
    await expect(all.next()).rejects.toThrow(/is NULL \(only answers carry embeddings: read them with role = 'agent'\)/);
    let answers = 0;
    for await (const b of readEvents(shardPath(dir, RUN), { columns: ['emb_tiny'], where: "role = 'agent'" })) answers += b.rows;
    expect(answers).toBe(25);
  });

  it('refuses an event without exactly one answer, or rows of another event', async () => {
    const w = await EventShardWriter.open({ dir, runId: RUN, encoders: ENCODERS });
    const [judge] = eventRows(0);
    await expect(w.append([judge!])).rejects.toThrow(/exactly one agent row, got 0/);
    await expect(w.append([makeRow(RUN, 0), makeRow(RUN, 0)])).rejects.toThrow(/exactly one agent row, got 2/);
    await expect(w.append([{ ...judge!, event: 1 }, makeRow(RUN, 0)])).rejects.toThrow(/event 1 appended, expected 0/);
    await w.close();
  });
});
