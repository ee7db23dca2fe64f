/**
 * DuckDB's allocator (its bundled jemalloc) otherwise hands memory back to the kernel after every Parquet
 * part and takes it again for the next, which costs a page fault per page (the vectors of each chunk are
 * fresh megabytes). Pages freed are kept a second (parts follow each other faster than that), not forever:
 * kept forever, every peak of the sweep would stay resident (bench/NOTES.md: DuckDB's freed pages). jemalloc reads this setting once, when the
 * native library loads, so it is set here, in the module every other corpus module is loaded after
 * (index.ts imports it first); a user's own setting wins.
 */
process.env.DUCKDB_JE_MALLOC_CONF ??= 'dirty_decay_ms:1000,muzzy_decay_ms:1000';

export {};
