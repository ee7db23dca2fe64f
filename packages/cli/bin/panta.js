#!/usr/bin/env node
// DuckDB's allocator otherwise hands memory back to the kernel after every Parquet part and takes it again
// for the next, which costs a page fault per page; freed pages are kept a second (see corpus's allocator.ts). It reads this setting when it first allocates, so it is set
// before DuckDB loads; a user's own setting wins.
process.env.DUCKDB_JE_MALLOC_CONF ??= 'dirty_decay_ms:1000,muzzy_decay_ms:1000';

// V8 lets the old generation grow to a multiple of what survived the last full collection before it collects
// again. A sweep allocates fast (prompts, rows, results) and keeps little, so the heap grew to several times
// its live data. Growing by half keeps it near its live size for a little more CPU in collections
// (bench/NOTES.md: V8's heap growth); the heap limit is untouched. A user's own setting wins.
if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent'))) {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--heap-growing-percent=50');
}

// The bundle `npm run build` makes (packages/cli/rolldown.config.mjs: a fifth less CPU to start), or the
// packages' dist/ when one was built again since (build-choice.js).
const { buildToRun } = await import('./build-choice.js');
const { main } = await import(buildToRun(new URL('../../', import.meta.url)) === 'bundle' ? '../bundle/main.js' : '../dist/main.js');
process.exitCode = await main(process.argv);
