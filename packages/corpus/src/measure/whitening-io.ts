import { copyFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CovarianceAccumulator, fitWhitening, type EncoderColumn, type Whitening } from '@panta/core';
import { readEvents } from '../event-reader.js';
import { queryRows, writeParquetTable } from '../parquet-table.js';
import { defineTable } from '../table.js';
import { sqlString } from '../duckdb.js';
import { commitFile } from '../fs-durable.js';
import { VectorCache } from './keyed.js';

import { whiteningPath } from '../corpus-paths.js';

export { whiteningPath };

/**
 * Fits the whitening of one (prompt, encoder) on every t = 0 answer of that prompt in the given shards
 * (docs/DESIGN.md#whitening). Identical embeddings are added once with their count; files and rows are visited in a fixed
 * order, so the fit is reproducible bit for bit. `traced(file)` may give a shard's t = 0 vectors from a
 * sweep trace instead (the same vectors in the same order); the other shards are read back.
 */
export async function fitShardWhitening(
  files: readonly string[],
  encoder: EncoderColumn,
  mode: 'zca' | 'raw',
  traced: (file: string) => Iterable<Float32Array> | undefined = () => undefined,
): Promise<Whitening> {
  const column = `emb_${encoder.name}`;
  const distinct = new VectorCache<{ count: number }>(Number.POSITIVE_INFINITY);
  const count = (data: Float32Array, offset: number) => distinct.getAt(data, offset, encoder.dim, () => ({ count: 0 })).count++;
  // Consecutive shards without a trace are read in one scan.
  let unread: string[] = [];
  const readBack = async () => {
    if (unread.length === 0) return;
    for await (const batch of readEvents(unread, { columns: [column], where: "sweep = 0 AND role = 'agent'" })) {
      const all = batch.columns[column] as Float32Array;
      for (let r = 0; r < batch.rows; r++) count(all, r * encoder.dim);
    }
    unread = [];
  };
  // Shards are in event order and files are visited sorted, so the fit sees rows in a fixed order.
  for (const file of [...files].sort()) {
    const vectors = traced(file);
    if (!vectors) {
      unread.push(file);
      continue;
    }
    await readBack();
    for (const v of vectors) count(v, 0);
  }
  await readBack();
  const acc = new CovarianceAccumulator(encoder.dim);
  for (const [vector, { count }] of distinct.entries()) acc.add(vector, count);
  return fitWhitening(acc, mode);
}

/**
 * One row per dimension i: mean[i] and row i of W, with the fit's metadata repeated. `mode` is the transform
 * applied; `fallback` is NULL, or `degenerate_pool` when zca was asked for but the t = 0 answers held fewer
 * than two distinct vectors, so raw was applied (see fitWhitening).
 */
export async function writeWhitening(out: string, promptId: string, encoder: string, w: Whitening): Promise<void> {
  const rows = Array.from({ length: w.dim }, (_, i) => ({
    prompt_id: promptId,
    encoder,
    mode: w.mode,
    fallback: w.fallback,
    samples: w.samples,
    lambda: w.lambda,
    i,
    mean: w.mean[i],
    w: Array.from(w.matrix.subarray(i * w.dim, (i + 1) * w.dim)),
  }));
  await writeParquetTable(whiteningPath(out, promptId, encoder), whiteningTable(w.dim), rows);
}

/** whitening/<prompt>/<encoder>.parquet for an encoder of dimension `dim`: one row per dimension. */
export function whiteningTable(dim: number) {
  return defineTable('whitening', [
    { name: 'prompt_id', type: 'VARCHAR', meaning: 'identifier of the prompt in the dataset' },
    { name: 'encoder', type: 'VARCHAR', meaning: 'sentence encoder the spins come from' },
    { name: 'mode', type: 'VARCHAR', values: ['zca', 'raw'], meaning: 'whitening mode applied (zca or raw)' },
    {
      name: 'fallback',
      type: 'VARCHAR',
      nullable: true,
      values: ['degenerate_pool'],
      meaning: 'NULL, or degenerate_pool where raw replaced zca',
    },
    { name: 'samples', type: 'BIGINT', meaning: 'samples (count)' },
    { name: 'lambda', type: 'DOUBLE', meaning: 'ridge lambda of the whitening' },
    { name: 'i', type: 'INTEGER', meaning: 'row index of W' },
    { name: 'mean', type: 'DOUBLE', meaning: 'mean vector of the pool' },
    { name: 'w', type: `DOUBLE[${dim}]` as `DOUBLE[${number}]`, meaning: 'whitening matrix W = (C + lambda I)^(-1/2), row-major' },
  ]);
}

/**
 * Copies another corpus's whitening file of one (prompt, encoder) into `out`, byte for byte, so that the
 * two corpora hold the same file (same checksum) and `out` stays readable without the other.
 */
export async function copyWhitening(from: string, out: string, promptId: string, encoder: string): Promise<void> {
  const final = whiteningPath(out, promptId, encoder);
  await mkdir(dirname(final), { recursive: true });
  const tmp = `${final}.tmp`;
  await copyFile(whiteningPath(from, promptId, encoder), tmp);
  await commitFile(tmp, final);
}

export async function readWhitening(out: string, promptId: string, encoder: string): Promise<Whitening> {
  const rows = await queryRows(`SELECT * FROM read_parquet(${sqlString(whiteningPath(out, promptId, encoder))}) ORDER BY i`);
  const dim = rows.length;
  const mean = new Float64Array(dim);
  const matrix = new Float64Array(dim * dim);
  rows.forEach((r, i) => {
    mean[i] = Number(r.mean);
    matrix.set(r.w as number[], i * dim);
  });
  const first = rows[0] ?? {};
  // A whitening written before the fallback existed has no such column: its mode was applied as asked.
  const fallback = first.fallback === 'degenerate_pool' ? 'degenerate_pool' : null;
  return { mode: first.mode as 'zca' | 'raw', fallback, dim, samples: Number(first.samples), lambda: Number(first.lambda), mean, matrix };
}
