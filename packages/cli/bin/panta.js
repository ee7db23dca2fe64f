#!/usr/bin/env node
// DuckDB's allocator otherwise hands memory back to the kernel after every Parquet part and takes it again
// for the next, which costs a page fault per page (measured: about 10% of a sweep's time); freed pages are
// kept a second (see corpus's allocator.ts). It reads this setting when it first allocates, so it is set
// before DuckDB loads; a user's own setting wins.
process.env.DUCKDB_JE_MALLOC_CONF ??= 'dirty_decay_ms:1000,muzzy_decay_ms:1000';

const { main } = await import('../dist/main.js');
process.exitCode = await main(process.argv);
