import { join } from 'node:path';
import { CovarianceAccumulator, fitWhitening, type EncoderColumn, type Whitening } from '@panta/core';
import { readEvents } from '../event-reader.js';
import { queryRows, writeParquetTable } from '../parquet-table.js';
import { sqlString } from '../duckdb.js';
import { VectorCache } from './keyed.js';

export function whiteningPath(out: string, promptId: string, encoder: string): string {
  return join(out, 'whitening', `${promptId}__${encoder}.parquet`);
}

/**
 * Fits the whitening of one (prompt, encoder) on every t = 0 answer of that prompt in the given shards
 * (DESIGN.md 4). Identical embeddings are added once with their count; files and rows are visited in a fixed
 * order, so the fit is reproducible bit for bit.
 */
export async function fitShardWhitening(files: readonly string[], encoder: EncoderColumn, mode: 'zca' | 'raw'): Promise<Whitening> {
  const column = `emb_${encoder.name}`;
  // Shards are in event order and files are visited sorted, so the fit sees rows in a fixed order.
  const distinct = new VectorCache<{ count: number }>(Number.POSITIVE_INFINITY);
  for await (const batch of readEvents([...files].sort(), { columns: [column], where: "sweep = 0 AND role = 'agent'" })) {
    const all = batch.columns[column] as Float32Array;
    for (let r = 0; r < batch.rows; r++) distinct.getAt(all, r * encoder.dim, encoder.dim, () => ({ count: 0 })).count++;
  }
  const acc = new CovarianceAccumulator(encoder.dim);
  for (const [vector, { count }] of distinct.entries()) acc.add(vector, count);
  return fitWhitening(acc, mode);
}

/** One row per dimension i: mean[i] and row i of W, with the fit's metadata repeated. */
export async function writeWhitening(out: string, promptId: string, encoder: string, w: Whitening): Promise<void> {
  const rows = Array.from({ length: w.dim }, (_, i) => ({
    prompt_id: promptId,
    encoder,
    mode: w.mode,
    samples: w.samples,
    lambda: w.lambda,
    i,
    mean: w.mean[i]!,
    w: Array.from(w.matrix.subarray(i * w.dim, (i + 1) * w.dim)),
  }));
  await writeParquetTable(
    whiteningPath(out, promptId, encoder),
    [
      { name: 'prompt_id', type: 'VARCHAR' },
      { name: 'encoder', type: 'VARCHAR' },
      { name: 'mode', type: 'VARCHAR' },
      { name: 'samples', type: 'BIGINT' },
      { name: 'lambda', type: 'DOUBLE' },
      { name: 'i', type: 'INTEGER' },
      { name: 'mean', type: 'DOUBLE' },
      { name: 'w', type: `DOUBLE[${w.dim}]` },
    ],
    rows,
  );
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
  return { mode: first.mode as 'zca' | 'raw', dim, samples: Number(first.samples), lambda: Number(first.lambda), mean, matrix };
}
