import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { EncoderColumn, EventRow, Tag } from '@panta/core';
import { closeDuckDB } from '@panta/corpus';
import { afterAll, afterEach, beforeEach } from 'vitest';
import { mulberry32 } from '../../../test/mulberry32.js';

export const ENCODERS: EncoderColumn[] = [
  { name: 'minilm', dim: 384 },
  { name: 'tiny', dim: 8 },
];

const TAG_CYCLE: Tag[] = ['correct', 'hallucinated', 'not_known', 'judge_failure'];

/** The event with index `e` of a synthetic run; `big` events carry 4096-neighbour (mean-field) lists. */
export function makeRow(
  runId: string,
  e: number,
  encoders: EncoderColumn[] = ENCODERS,
  bigEvents: ReadonlySet<number> = new Set(),
): EventRow {
  const r = mulberry32(e + 1); // deterministic, so expected values can be rebuilt for any event
  const embeddings: Record<string, Float32Array> = {};
  for (const enc of encoders) embeddings[enc.name] = Float32Array.from({ length: enc.dim }, () => r() * 2 - 1);
  let neighbours: Int32Array;
  let readVersions: Float64Array;
  if (bigEvents.has(e)) {
    neighbours = Int32Array.from({ length: 4096 }, (_, i) => (i * 7919 + e) % 4097);
    readVersions = Float64Array.from({ length: 4097 }, (_, i) => (i === 4096 ? 2 ** 40 + e : e * 4097 + i));
  } else if (e % 5 === 0) {
    neighbours = new Int32Array(0);
    readVersions = new Float64Array(0);
  } else {
    neighbours = Int32Array.from([e % 11, (e + 3) % 11, -1 - (e % 2)]);
    readVersions = Float64Array.from([e - 1, 2 ** 33 + e, 0]);
  }
  return {
    run_id: runId,
    config_id: `cfg-${runId}`,
    trial: e % 3,
    prompt_id: 'q1',
    geometry: 'meanfield',
    n: 4097,
    k: 4096,
    temperature: 0.7,
    protocol: 'glauber',
    seed: 2 ** 52 + e * 3,
    event: e,
    role: 'agent',
    sweep: Math.floor(e / 10),
    agent: e % 10,
    persona: e % 3 === 0 ? null : `p${e % 3}`,
    neighbours,
    read_versions: readVersions,
    response: e % 7 === 0 ? '' : `Réponse ${e}: ${'the capital is Paris '.repeat(1 + (e % 4))}✓`,
    board: e % 4 === 0 ? null : JSON.stringify([{ id: `e${e}.0`, object: 'answer', claim: 'Paris', confidence: 0.5, revises: null }]),
    divergence: e % 6 === 0 ? null : e / 1000,
    finish_reason: e % 2 ? 'stop' : 'length',
    reply_status: e % 7 === 0 ? 'empty' : 'ok',
    prompt_tokens: 100 + e,
    completion_tokens: e % 50,
    latency_ms: e / 8,
    sampling_temperature: 0.7 - e / 1e6,
    backend: 'mock',
    model: 'mock-model',
    tag: TAG_CYCLE[e % 4],
    judge_model: 'reference',
    embeddings,
    created_at: 1_700_000_000_000 + e * 1001,
  };
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'panta-corpus-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A fresh temporary folder for each test of the file (handed to `use` before the test, removed after it), and the
 * package's DuckDB closed after the file's last test.
 */
export function tempDirPerTest(use: (dir: string) => void): void {
  let cleanup: (() => Promise<void>) | undefined;
  beforeEach(async () => {
    const t = await tempDir();
    cleanup = t.cleanup;
    use(t.dir);
  });
  afterEach(async () => {
    await cleanup?.();
  });
  afterAll(async () => {
    await closeDuckDB();
  });
}

/** A DuckDB of its own, to check files independently of the package's helpers. */
export async function independentDuckDB(): Promise<{ con: DuckDBConnection; close: () => void }> {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  return {
    con,
    close: () => {
      con.closeSync();
      db.closeSync();
    },
  };
}

/** Rows in each row group of the Parquet file at `path`, in file order (read by a DuckDB of its own). */
export async function rowGroupRows(path: string): Promise<number[]> {
  const { con, close } = await independentDuckDB();
  try {
    const groups = (
      await con.runAndReadAll(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(${q(path)}) ORDER BY 1`)
    ).getRows();
    return groups.map((g) => Number(g[1]));
  } finally {
    close();
  }
}

export function q(path: string): string {
  return `'${path.replaceAll("'", "''")}'`;
}
