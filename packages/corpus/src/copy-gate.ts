import { availableParallelism } from 'node:os';

/**
 * How many Parquet encodings of events run at once in this process. Each one holds its own row-group
 * buffers in DuckDB (tens of MB when rows carry long read lists), and libuv would otherwise run four at
 * once, one per pool thread (bench/NOTES.md: two Parquet encodings at a time). The JS thread
 * needs a core of its own to produce rows, so more encodings than the other cores only add memory. Two
 * at least: with one, a part whose chunks wait for the busy JS thread held every other run's part back
 * (on 2 cores the quickstart then idled a third of its time). PANTA_PARQUET_WRITES overrides.
 */
export function parquetWriteSlots(): number {
  const env = Number(process.env.PANTA_PARQUET_WRITES);
  if (Number.isInteger(env) && env > 0) return env;
  return Math.max(2, Math.min(4, availableParallelism() - 1));
}

let free = -1;
const waiting: (() => void)[] = [];

/** Runs `write` once a slot is free (first come, first served) and frees the slot when it settles. */
export async function gatedWrite<T>(write: () => Promise<T>): Promise<T> {
  if (free < 0) free = parquetWriteSlots();
  if (free > 0) free--;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await write();
  } finally {
    // The slot passes straight to the next writer in line, so a newcomer cannot overtake it.
    const next = waiting.shift();
    if (next) next();
    else free++;
  }
}
