import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { isEventRole, EVENT_ROWS_SQL, TAGS, type EncoderColumn, type EventRow } from '@panta/core';
import duckdb from '@duckdb/node-bindings';
import { CHUNK_ROWS, copySource, type ChunkSource } from './chunk-source.js';
import { gatedWrite } from './copy-gate.js';
import { partPath, partsDir, partsRoot, parsePartName, shardPath, tmpName, validateRunId } from './corpus-paths.js';
import { openConnection, readParquetSql, sqlIdent, sqlString } from './duckdb.js';
import { EVENT_BASE_COLUMNS, eventColumns, type ColumnDef } from './event-schema.js';
import { commitFile, exists, fsyncDir, removeQuietly } from './fs-durable.js';
import type { SqlType } from './sql-type.js';
import { writeVector } from './vector-write.js';

export interface EventShardWriterOptions {
  /** Corpus root (the folder that holds events/). */
  dir: string;
  runId: string;
  /** Embedding columns, in column order. */
  encoders: readonly EncoderColumn[];
  /** Rows per durable part file (default 4096). Memory holds at most about three parts of rows. */
  partRows?: number;
  /**
   * The first event this writer will receive (default 0). On resume, pass `shardProgress().nextEvent`:
   * parts before it are kept and merged at finalize, parts from it on are deleted (they are being redone).
   */
  startEvent?: number;
}

/**
 * Parquet options of the finalized shard (docs/DESIGN.md#dependencies). ZSTD level 1: embedding columns (noise to a
 * compressor) come out no larger than at the default level 3, for less CPU (bench/NOTES.md: ZSTD level).
 */
const SHARD_COPY_OPTIONS = 'FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1';
/** Rows per row group of a merged shard: 16,384, fewer for wide rows (see shardRowGroup). */
const SHARD_ROW_GROUP = 16384;
/**
 * Parts only live until finalize, or become the shard of a run that fits one. Row groups of one chunk each
 * (chunkRowsFor) keep DuckDB's per-row-group buffers small, and cost less CPU per row than larger groups
 * (bench/NOTES.md: part row groups).
 */
const PART_COPY_OPTIONS = 'FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1';
/** List entries (reads and neighbours) per chunk, and so per row group, when rows are wide (see chunkRowsFor). */
const LIST_ENTRIES_PER_CHUNK = 1 << 18;

/**
 * A finalized shard's row group for rows whose widest list pair (reads and neighbours) holds `widest` entries;
 * a shard rewritten in place (shard-columns.ts) uses the same, and its COPY options.
 */
export function shardRowGroupRows(widest: number): number {
  if (widest === 0) return SHARD_ROW_GROUP;
  return Math.max(CHUNK_ROWS, Math.min(SHARD_ROW_GROUP, Math.floor((4 * LIST_ENTRIES_PER_CHUNK) / widest)));
}

export { SHARD_COPY_OPTIONS };

const TAG_SET: ReadonlySet<string> = new Set(TAGS);

/** Every column of a part's rows, in column order. */
type Extract = (rows: readonly EventRow[]) => unknown[][];

/** A connection that writes parts, and the tail of the work queued on it. */
interface Slot {
  connection: DuckDBConnection;
  /** Resolves when the slot's last part is durable (rejects if that write failed). */
  tail: Promise<void>;
}

/**
 * Writes one run's events to `events/<run_id>.parquet`, durably as it goes.
 *
 * Rows arrive in event order. Every `partRows` rows (and on `flush()`) the buffered rows become one
 * Parquet part under `events/.parts/<run_id>/`, written under a .tmp name, fsynced and renamed, so a crash
 * loses at most the rows not yet in a part and never leaves a half part under a final name. `finalize()`
 * merges the parts, in event order, into the shard and deletes them.
 *
 * Throughput: a part is written by one `COPY` that pulls its rows from JS chunk by chunk (chunk-source.ts):
 * the JS thread turns each 2048 rows into DuckDB vectors column by column (embeddings and lists as bulk
 * memory copies, see vector-write.ts) and the COPY's thread encodes them. Parquet encoding is the dominant
 * cost, so there are two slots, each on its own connection (a connection runs one statement at a time):
 * while part k is encoded on one, part k+1 fills and starts on the other. Memory stays bounded: at most
 * three parts of rows held in JS (one filling, two being written); `append` waits when both slots are busy.
 */
export class EventShardWriter {
  private buffer: EventRow[] = [];
  /** Most list entries (reads and neighbours) in one row appended so far: sizes row groups. */
  private widest = 0;
  private nextEvent: number;
  private partCount = 0;
  private failure: { error: unknown } | undefined;
  private state: 'open' | 'finalized' | 'closed' = 'open';
  private released = false;
  private readonly extract: Extract;
  private readonly columns: readonly ColumnDef[];

  private constructor(
    readonly dir: string,
    readonly runId: string,
    readonly encoders: readonly EncoderColumn[],
    readonly partRows: number,
    private readonly slots: readonly Slot[],
    startEvent: number,
  ) {
    this.nextEvent = startEvent;
    this.columns = eventColumns(encoders);
    this.extract = compileExtract([
      ...EVENT_BASE_COLUMNS.map((c) => field(c.name as keyof EventRow)),
      ...encoders.map((e) => `.embeddings?.[${JSON.stringify(e.name)}] ?? null`),
      field('created_at'),
    ]);
  }

  static async open(options: EventShardWriterOptions): Promise<EventShardWriter> {
    const { dir, runId, encoders, partRows = 4096, startEvent = 0 } = options;
    validateRunId(runId);
    if (!Number.isSafeInteger(partRows) || partRows <= 0) throw new Error(`partRows must be a positive integer, got ${partRows}`);
    if (!Number.isSafeInteger(startEvent) || startEvent < 0)
      throw new Error(`startEvent must be a non-negative integer, got ${startEvent}`);
    eventColumns(encoders); // validates the encoders before anything is touched
    if (await exists(shardPath(dir, runId))) throw new Error(`run ${runId} is already finalized (${shardPath(dir, runId)} exists)`);
    const parts = partsDir(dir, runId);
    await mkdir(parts, { recursive: true });
    // Parts at or past startEvent (and stray .tmp files) belong to an attempt being redone.
    for (const name of await readdir(parts)) {
      const first = parsePartName(name);
      if (first === undefined || first >= startEvent) await removeQuietly(join(parts, name));
    }
    const slots: Slot[] = [];
    try {
      for (let i = 0; i < 2; i++) slots.push({ connection: await openConnection(), tail: Promise.resolve() });
    } catch (err) {
      for (const s of slots) s.connection.closeSync();
      throw err;
    }
    return new EventShardWriter(dir, runId, encoders, partRows, slots, startEvent);
  }

  /** The event the next `append` must carry. */
  get expectedEvent(): number {
    return this.nextEvent;
  }

  /**
   * Buffers one event: its agent row, or all its rows (extra calls first or after, see EventRow.role). A part
   * always ends after a whole event, so a resume never splits one. When the event completes a part, the part
   * is handed to DuckDB and the call resolves once its write has started (which waits for that slot's
   * previous part, if still being written). Otherwise it returns nothing: most appends only buffer, and
   * an await per row would cost a promise and a turn of the microtask queue each.
   */
  append(event: EventRow | readonly EventRow[]): Promise<void> | undefined {
    try {
      return this.buffered(event);
    } catch (error) {
      // Bad rows and a failed writer reject, as from an async method.
      return Promise.reject(error);
    }
  }

  private buffered(event: EventRow | readonly EventRow[]): Promise<void> | undefined {
    this.assertOpen();
    if (Array.isArray(event)) {
      const rows = event as readonly EventRow[];
      let answers = 0;
      for (const row of rows) {
        this.check(row);
        if (isEventRole(row.role)) answers++;
      }
      if (answers !== 1) throw new Error(`run ${this.runId}: an event has exactly one agent row, got ${answers}`);
      for (const row of rows) this.buffer.push(row);
    } else {
      const row = event as EventRow;
      this.check(row);
      if (!isEventRole(row.role)) throw new Error(`run ${this.runId}: an event has exactly one agent row, got 0`);
      this.buffer.push(row);
    }
    this.nextEvent++;
    if (this.buffer.length >= this.partRows) return this.schedulePart();
    return undefined;
  }

  /** A row must belong to this run and to the event expected next; an answer needs a tag and its embeddings. */
  private check(row: EventRow): void {
    if (row.event !== this.nextEvent) {
      throw new Error(
        `run ${this.runId}: event ${row.event} appended, expected ${this.nextEvent} (events must be contiguous and in order)`,
      );
    }
    if (row.run_id !== this.runId) throw new Error(`run ${this.runId}: row of run ${JSON.stringify(row.run_id)} appended`);
    if (!isEventRole(row.role)) return;
    this.widest = Math.max(this.widest, row.read_versions.length + row.neighbours.length);
    if (!TAG_SET.has(row.tag as string))
      throw new Error(`run ${this.runId}, event ${row.event}: tag ${JSON.stringify(row.tag)} is not one of ${TAGS.join(', ')}`);
    for (const e of this.encoders) {
      const v = row.embeddings?.[e.name];
      if (!v || v.length !== e.dim) {
        throw new Error(`run ${this.runId}, event ${row.event}: embedding ${e.name} has ${v ? v.length : 'no'} values, expected ${e.dim}`);
      }
    }
  }

  /**
   * A merged shard's row group: 16,384 rows, or as few as a chunk (2,048, what a Parquet scan hands on) when
   * the rows carry long read lists, so that merging a mean field's parts does not hold 16,384 rows of them
   * (at 1,000 agents, 33 M list entries) while a row group is encoded.
   */
  private shardRowGroup(): number {
    return shardRowGroupRows(this.widest);
  }

  /** Writes every buffered row as a part and waits until all parts are durable. */
  async flush(): Promise<void> {
    this.assertOpen();
    if (this.buffer.length > 0) void this.schedulePart().catch(() => undefined);
    await this.settle();
    this.throwIfFailed();
  }

  /**
   * Flushes, merges all parts (in event order) into `events/<run_id>.parquet` (tmp name + rename; a single
   * part is renamed into place as it is), checks
   * that it holds exactly events 0..n-1, deletes the parts and releases the connections. Returns the shard
   * path. On failure the connections are released too and the durable parts stay for a resume.
   */
  async finalize(): Promise<string> {
    try {
      await this.flush();
      this.state = 'finalized';
      const { connection } = this.slots[0];
      const final = shardPath(this.dir, this.runId);
      const tmp = tmpName(final);
      const parts = await listParts(this.dir, this.runId);
      if (parts.length === 1) {
        // A run that fits one part is already its shard: encoding it again would double the cost of
        // every run up to partRows events (Parquet encoding dominates writing).
        await this.checkShard(connection, parts[0]);
        await commitFile(parts[0], final);
      } else {
        // read_parquet over an explicit list scans the files in list order and, with insertion order
        // preserved, emits rows in that order: a streaming merge, no sort, bounded memory. No parts (an
        // empty run) copies an empty source, which still gives a file with the full schema.
        await gatedWrite(async () => {
          const options = `${SHARD_COPY_OPTIONS}, ROW_GROUP_SIZE ${this.shardRowGroup()}`;
          if (parts.length > 0) await connection.run(`COPY (SELECT * FROM ${readParquetSql(parts)}) TO ${sqlString(tmp)} (${options})`);
          else await copySource(connection, this.source([]), tmp, options);
        });
        await this.checkShard(connection, tmp);
        await commitFile(tmp, final);
      }
      await removeQuietly(partsDir(this.dir, this.runId));
      await fsyncDir(partsRoot(this.dir));
      return final;
    } finally {
      await this.release();
    }
  }

  /**
   * Releases the connections without finalizing: durable parts stay for a later resume, buffered rows
   * not yet in a part are dropped. Safe to call after a failure or twice.
   */
  async close(): Promise<void> {
    if (this.state === 'open') this.state = 'closed';
    await this.release();
  }

  /** Waits for every queued part write, failed or not. */
  private async settle(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.tail.catch(() => undefined)));
  }

  private async release(): Promise<void> {
    if (this.state === 'open') this.state = 'closed';
    if (this.released) return;
    this.released = true;
    this.buffer = [];
    await this.settle();
    for (const s of this.slots) s.connection.closeSync();
  }

  /**
   * The merged file must hold events 0..nextEvent-1, one agent row each. Cheap in time and memory: count,
   * min and max stream, and distinctness is a bitmap of n bits (count(DISTINCT) would hold a hash table of
   * every event: hundreds of MB on a run of millions).
   */
  private async checkShard(connection: DuckDBConnection, path: string): Promise<void> {
    const source = `FROM read_parquet(${sqlString(path)}) WHERE ${EVENT_ROWS_SQL}`;
    const reader = await connection.runAndReadAll(
      `SELECT count(*)::DOUBLE, coalesce(min(event), 0)::DOUBLE, coalesce(max(event), -1)::DOUBLE ${source}`,
    );
    const [count, min, max] = reader.getRows()[0] as number[];
    const n = this.nextEvent;
    let distinct = count;
    if (count === n && n > 0 && min === 0 && max === n - 1) {
      const bits = await connection.runAndReadAll(`SELECT bit_count(bitstring_agg(event, 0, ${n - 1}))::DOUBLE ${source}`);
      distinct = (bits.getRows()[0] as number[])[0];
    }
    if (count !== n || distinct !== n || (n > 0 && (min !== 0 || max !== n - 1))) {
      await removeQuietly(path);
      throw new Error(
        `run ${this.runId}: merged shard holds ${count} rows (${distinct} distinct events ${min}..${max}), expected events 0..${n - 1}`,
      );
    }
  }

  /**
   * Queues the buffered rows as the next part on the next slot. Resolves when the slot is free (its
   * previous part written) and this part's COPY has been started; the COPY then runs in the background.
   */
  private schedulePart(): Promise<void> {
    const rows = this.buffer;
    this.buffer = [];
    const slot = this.slots[this.partCount++ % this.slots.length];
    const free = slot.tail;
    slot.tail = free.then(() => this.writePart(slot, rows));
    // Record the first failure; callers see it from the next append/flush/finalize.
    slot.tail.catch((error: unknown) => {
      this.failure ??= { error };
    });
    return free;
  }

  private async writePart(slot: Slot, rows: readonly EventRow[]): Promise<void> {
    const final = partPath(this.dir, this.runId, rows[0].event);
    const tmp = tmpName(final);
    const source = this.source(rows);
    await gatedWrite(() =>
      copySource(slot.connection, source, tmp, `${PART_COPY_OPTIONS}, ROW_GROUP_SIZE ${source.chunkRows ?? CHUNK_ROWS}`),
    );
    await commitFile(tmp, final);
  }

  /**
   * The rows as a COPY source: each chunk is filled column by column from the row objects. A text column
   * with one value in every row of the part (run_id, backend, model, ... : most of them) becomes a literal
   * in the SELECT instead: writing strings is one native call per value, the dearest part of filling a
   * chunk. The file is the same: same columns, types, order and values.
   */
  private source(rows: readonly EventRow[]): ChunkSource {
    const { columns } = this;
    const values = this.extract(rows);
    const select: string[] = [];
    const kept: number[] = [];
    columns.forEach((c, j) => {
      const value = c.type === 'VARCHAR' && rows.length > 0 ? constantText(values[j]) : undefined;
      if (value === undefined) {
        kept.push(j);
        select.push(sqlIdent(c.name));
      } else select.push(`${sqlString(value)}::VARCHAR AS ${sqlIdent(c.name)}`);
    });
    return {
      columns: kept.map((j) => columns[j]),
      rows: rows.length,
      chunkRows: chunkRowsFor(rows),
      select: select.join(', '),
      fill(chunk: duckdb.DataChunk, types: readonly SqlType[], start: number, count: number): void {
        for (let k = 0; k < kept.length; k++) {
          const j = kept[k];
          const column = start === 0 && count === rows.length ? values[j] : values[j].slice(start, start + count);
          writeVector(duckdb.data_chunk_get_vector(chunk, k), types[k], column, count, columns[j].name);
        }
      },
    };
  }

  private assertOpen(): void {
    this.throwIfFailed();
    if (this.state !== 'open') throw new Error(`run ${this.runId}: writer is ${this.state}`);
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}

/**
 * Rows per chunk and per row group of a part: 2048, or fewer when the rows carry long read lists, so that a
 * row group holds at most about LIST_ENTRIES_PER_CHUNK list entries. The Parquet writer keeps a whole row
 * group's values, levels and pages while it encodes, some tens of bytes per list entry: 2048 rows of a mean
 * field of 729 are 3 M entries (bench/NOTES.md: row groups of wide rows).
 */
function chunkRowsFor(rows: readonly EventRow[]): number {
  let widest = 0;
  for (const r of rows) widest = Math.max(widest, r.read_versions.length + r.neighbours.length);
  if (widest === 0) return CHUNK_ROWS;
  return Math.max(64, Math.min(CHUNK_ROWS, Math.floor(LIST_ENTRIES_PER_CHUNK / widest)));
}

/** The value of a text column whose rows all hold the same string (not null, no NUL byte), else undefined. */
function constantText(values: readonly unknown[]): string | undefined {
  const first = values[0];
  if (typeof first !== 'string' || first.includes('\0')) return undefined;
  for (let i = 1; i < values.length; i++) if (values[i] !== first) return undefined;
  return first;
}

/**
 * A part's columns are extracted in one compiled pass over its rows: each row object is visited once (30
 * passes, one per column, each missed the cache on every row), and each property read names its property
 * (one closure shared by the columns read a different key at the same site, which V8 serves from its slow
 * megamorphic cache). Filling a part is then mostly the copies into DuckDB's vectors. `accesses` are property
 * paths built from schema names (identifiers) and encoder names spliced in as JSON string literals.
 */
function compileExtract(accesses: readonly string[]): Extract {
  const declare = accesses.map((_, j) => `const c${j} = new Array(n);`).join(' ');
  const read = accesses.map((a, j) => `c${j}[i] = r${a};`).join(' ');
  const columns = accesses.map((_, j) => `c${j}`).join(', ');
  return new Function(
    'rows',
    `const n = rows.length; ${declare} for (let i = 0; i < n; i++) { const r = rows[i]; ${read} } return [${columns}];`,
  ) as Extract;
}

function field(name: keyof EventRow): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`column ${name}: not an identifier`);
  return `.${name}`;
}

/** Complete part files of a run, in event order (full paths). */
export async function listParts(dir: string, runId: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(partsDir(dir, runId));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .map((name) => ({ name, first: parsePartName(name) }))
    .filter((p): p is { name: string; first: number } => p.first !== undefined)
    .sort((a, b) => a.first - b.first)
    .map((p) => join(partsDir(dir, runId), p.name));
}
