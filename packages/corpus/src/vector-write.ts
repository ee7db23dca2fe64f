import { endianness } from 'node:os';
import duckdb from '@duckdb/node-bindings';
import type { ScalarName, SqlType } from './sql-type.js';

/**
 * Column-at-a-time writers into a raw DuckDB data chunk vector.
 *
 * Why not node-api's `DuckDBVector.setItem` / `appendArray`: those box every value (a DuckDBArrayValue per
 * embedding, a JS number per float) and cost microseconds per value, which caps an embedding writer at a
 * few thousand rows per second. Here each fixed-width column becomes one typed array copied into the
 * vector with a single `copy_data_to_vector`: an embedding column of 2048 rows x 384 floats is one memcpy,
 * a list column's children are one memcpy after a `list_vector_reserve`.
 *
 * Int64 values (BIGINT, TIMESTAMP) are written as two 32-bit halves from JS numbers, so no BigInt is made
 * per value; that is exact for |v| < 2^53, which covers event indices, seeds and microsecond timestamps.
 */

if (endianness() !== 'LE') throw new Error('@panta/corpus writes DuckDB vectors as little-endian memory');

const TWO32 = 4294967296;

/**
 * Reused staging buffers, one per use site. Fresh multi-megabyte typed arrays are expensive far beyond
 * their memcpy: every new page is a page fault, which costs many times the copy itself (bench/NOTES.md:
 * staging buffers). A buffer is only used inside one synchronous writeVector call and
 * copy_data_to_vector copies out of it, so reuse is safe. Buffers above MAX_POOLED are not kept.
 */
const MAX_POOLED = 64 << 20;
const pool = new Map<string, ArrayBuffer>();

function scratch(slot: string, bytes: number): ArrayBuffer {
  if (bytes > MAX_POOLED) return new ArrayBuffer(bytes);
  let buf = pool.get(slot);
  if (!buf || buf.byteLength < bytes) {
    buf = new ArrayBuffer(Math.max(bytes, Math.min(MAX_POOLED, (buf?.byteLength ?? 0) * 2), 1024));
    pool.set(slot, buf);
  }
  return buf;
}

type NumCtor<T> = new (buffer: ArrayBuffer, byteOffset: number, length: number) => T;

/** A typed array of `n` elements over the slot's buffer (contents are stale: write every element). */
function scratchArray<T extends { fill(v: number): T }>(slot: string, Ctor: NumCtor<T> & { BYTES_PER_ELEMENT: number }, n: number): T {
  return new Ctor(scratch(slot, n * Ctor.BYTES_PER_ELEMENT), 0, n);
}

/** A value that can be written into `T[]` / `T[d]`: a typed array or a plain array. */
type Seq = ArrayLike<unknown>;

class NullMask {
  private bits: Uint8Array<ArrayBuffer> | null = null;
  constructor(private readonly count: number) {}

  setNull(i: number): void {
    if (!this.bits) {
      // DuckDB validity masks are uint64 words, bit i = row i valid.
      this.bits = new Uint8Array(new ArrayBuffer(Math.ceil(this.count / 64) * 8)).fill(0xff);
    }
    this.bits[i >> 3] &= ~(1 << (i & 7));
  }

  /** Writes the mask only when some row is null: an untouched vector means "all valid". */
  apply(vector: duckdb.Vector): void {
    if (!this.bits) return;
    duckdb.vector_ensure_validity_writable(vector);
    // vector_get_validity hands back a copy; writing goes through this explicit copy instead.
    duckdb.copy_data_to_vector_validity(vector, 0, this.bits.buffer, this.bits.byteOffset, this.bits.byteLength);
  }
}

function fail(what: string, i: number, expected: string, v: unknown): never {
  const shown = typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : String(v);
  throw new Error(`column ${what}, row ${i}: expected ${expected}, got ${typeof v} ${shown}`);
}

function copyInto(vector: duckdb.Vector, view: ArrayBufferView): void {
  if (view.byteLength > 0) duckdb.copy_data_to_vector(vector, 0, view.buffer as ArrayBuffer, view.byteOffset, view.byteLength);
}

/** Writes `count` values of `values` into `vector`, whose DuckDB type is `type`. */
export function writeVector(vector: duckdb.Vector, type: SqlType, values: Seq, count: number, what: string): void {
  if (values.length < count) throw new Error(`column ${what}: ${values.length} values for ${count} rows`);
  if (type.kind === 'scalar') writeScalars(vector, type.name, values, count, what);
  else if (type.kind === 'list') writeList(vector, type.child, values, count, what);
  else writeArray(vector, type.child, type.size, values, count, what);
}

function writeScalars(vector: duckdb.Vector, name: ScalarName, values: Seq, count: number, what: string): void {
  const nulls = new NullMask(count);
  if (name === 'VARCHAR') {
    for (let i = 0; i < count; i++) {
      const v = values[i];
      if (typeof v === 'string') duckdb.vector_assign_string_element(vector, i, v);
      else if (v == null) nulls.setNull(i);
      else fail(what, i, 'a string', v);
    }
  } else {
    copyInto(vector, encodeFixed(name, values, count, what, nulls));
  }
  nulls.apply(vector);
}

/** Fixed-width scalars into a fresh typed array; nulls become zero bits plus a cleared validity bit. */
function encodeFixed(
  name: ScalarName,
  values: Seq,
  count: number,
  what: string,
  nulls: Pick<NullMask, 'setNull'> | null,
  slot = 'fixed',
): ArrayBufferView {
  switch (name) {
    case 'INTEGER':
      return encodeInt32(values, count, what, nulls, slot);
    case 'DOUBLE':
    case 'FLOAT':
      return encodeFloats(name, values, count, what, nulls, slot);
    case 'BIGINT':
    case 'TIMESTAMP':
      return encodeInt64(name, values, count, what, nulls, slot);
    case 'BOOLEAN':
      return encodeBooleans(values, count, what, nulls, slot);
    case 'VARCHAR':
      throw new Error('unreachable: VARCHAR is not fixed-width');
  }
}

type Nulls = Pick<NullMask, 'setNull'> | null;

function encodeInt32(values: Seq, count: number, what: string, nulls: Nulls, slot: string): ArrayBufferView {
  if (values instanceof Int32Array) return values.subarray(0, count);
  const out = scratchArray(slot, Int32Array, count);
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (typeof v === 'number' && (v | 0) === v) out[i] = v;
    else if (v == null && nulls) {
      nulls.setNull(i);
      out[i] = 0;
    } else fail(what, i, 'a 32-bit integer', v);
  }
  return out;
}

function encodeFloats(name: 'DOUBLE' | 'FLOAT', values: Seq, count: number, what: string, nulls: Nulls, slot: string): ArrayBufferView {
  if (name === 'DOUBLE' && values instanceof Float64Array) return values.subarray(0, count);
  if (name === 'FLOAT' && values instanceof Float32Array) return values.subarray(0, count);
  const out = name === 'DOUBLE' ? scratchArray(slot, Float64Array, count) : scratchArray(slot, Float32Array, count);
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (typeof v === 'number') out[i] = v;
    else if (v == null && nulls) {
      nulls.setNull(i);
      out[i] = 0;
    } else fail(what, i, 'a number', v);
  }
  return out;
}

/** BIGINT and TIMESTAMP as two 32-bit words each, low word first. */
function encodeInt64(name: 'BIGINT' | 'TIMESTAMP', values: Seq, count: number, what: string, nulls: Nulls, slot: string): Int32Array {
  const out = scratchArray(slot, Int32Array, count * 2);
  const isTs = name === 'TIMESTAMP';
  for (let i = 0; i < count; i++) {
    let v = values[i];
    if (v == null) {
      if (nulls) nulls.setNull(i);
      else fail(what, i, 'a value (no nulls inside lists)', v);
      out[2 * i] = out[2 * i + 1] = 0;
      continue;
    }
    if (isTs) {
      // TIMESTAMP is microseconds since the epoch; we take milliseconds (Date.now()) or a Date.
      const ms = v instanceof Date ? v.getTime() : v;
      if (typeof ms !== 'number' || !Number.isFinite(ms)) fail(what, i, 'a Date or epoch milliseconds', v);
      v = Math.round(ms * 1000);
    }
    if (typeof v === 'number' && Number.isInteger(v)) {
      out[2 * i] = (v % TWO32) | 0; // low word (ToInt32 keeps the low 32 bits, sign-correct)
      out[2 * i + 1] = Math.floor(v / TWO32) | 0;
    } else if (typeof v === 'bigint' && BigInt.asIntN(64, v) === v) {
      out[2 * i] = Number(BigInt.asIntN(32, v));
      out[2 * i + 1] = Number(BigInt.asIntN(32, v >> 32n));
    } else fail(what, i, isTs ? 'a Date or epoch milliseconds' : 'an integer', v);
  }
  return out;
}

function encodeBooleans(values: Seq, count: number, what: string, nulls: Nulls, slot: string): ArrayBufferView {
  const out = scratchArray(slot, Uint8Array, count);
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (typeof v === 'boolean') out[i] = v ? 1 : 0;
    else if (v == null && nulls) {
      nulls.setNull(i);
      out[i] = 0;
    } else fail(what, i, 'a boolean', v);
  }
  return out;
}

function isSeq(v: unknown): v is Seq {
  return Array.isArray(v) || ArrayBuffer.isView(v);
}

function writeList(vector: duckdb.Vector, child: SqlType, values: Seq, count: number, what: string): void {
  const nulls = new NullMask(count);
  // list_entry_t is { uint64 offset; uint64 length }: four 32-bit words per row.
  const entries = scratchArray('entries', Uint32Array, count * 4);
  let total = 0;
  for (let i = 0; i < count; i++) {
    const v = values[i];
    entries[4 * i] = total % TWO32;
    entries[4 * i + 1] = Math.floor(total / TWO32);
    entries[4 * i + 3] = 0;
    if (v == null) {
      nulls.setNull(i);
      entries[4 * i + 2] = 0;
      continue;
    }
    if (!isSeq(v)) fail(what, i, 'an array', v);
    entries[4 * i + 2] = v.length;
    total += v.length;
  }
  // reserve grows the child's capacity (set_size alone does not allocate), then the size makes it visible.
  duckdb.list_vector_reserve(vector, total);
  duckdb.list_vector_set_size(vector, total);
  copyInto(vector, entries);
  writeChildren(duckdb.list_vector_get_child(vector), child, values, count, total, 0, what);
  nulls.apply(vector);
}

function writeArray(vector: duckdb.Vector, child: SqlType, size: number, values: Seq, count: number, what: string): void {
  const nulls = new NullMask(count);
  for (let i = 0; i < count; i++) {
    const v = values[i];
    if (v == null) nulls.setNull(i);
    else if (!isSeq(v)) fail(what, i, `an array of ${size}`, v);
    else if (v.length !== size) throw new Error(`column ${what}, row ${i}: expected ${size} values, got ${v.length}`);
  }
  // The array child is pre-sized to capacity x size: no reserve needed. Null rows stay zero-filled.
  writeChildren(duckdb.array_vector_get_child(vector), child, values, count, count * size, size, what);
  nulls.apply(vector);
}

/**
 * Writes the concatenation of the rows' sequences (`total` values) into a LIST/ARRAY child vector. Numeric
 * children take the bulk path: typed-array rows are `set()` into one buffer (a memcpy each), then copied to
 * the vector at once. `fixed` > 0 means every non-null row has exactly that length (ARRAY).
 */
function writeChildren(child: duckdb.Vector, type: SqlType, rows: Seq, count: number, total: number, fixed: number, what: string): void {
  const inner = `${what}[]`;
  if (type.kind === 'scalar' && (type.name === 'INTEGER' || type.name === 'FLOAT' || type.name === 'DOUBLE'))
    return writeNumberChildren(child, type.name, rows, count, total, fixed, inner);
  if (type.kind === 'scalar' && type.name === 'BIGINT') return writeBigintChildren(child, rows, count, total, fixed, inner);
  // Everything else (strings, booleans, timestamps, nested lists): flatten and recurse. Small tables only.
  const flat: unknown[] = new Array(total);
  let off = 0;
  for (let i = 0; i < count; i++) {
    const v = rows[i] as Seq | null | undefined;
    if (v == null) {
      for (let j = 0; j < fixed; j++) flat[off++] = null;
      continue;
    }
    for (let j = 0; j < v.length; j++) flat[off++] = v[j];
  }
  writeVector(child, type, flat, total, inner);
}

/** Numeric children: typed-array rows `set()` into one buffer (a memcpy each), copied to the vector at once. */
function writeNumberChildren(
  child: duckdb.Vector,
  name: 'INTEGER' | 'FLOAT' | 'DOUBLE',
  rows: Seq,
  count: number,
  total: number,
  fixed: number,
  inner: string,
): void {
  const out =
    name === 'INTEGER'
      ? scratchArray('child', Int32Array, total)
      : name === 'FLOAT'
        ? scratchArray('child', Float32Array, total)
        : scratchArray('child', Float64Array, total);
  const Ctor = out.constructor;
  // A null element (an undefined FOCUS value) is a NULL child, as a null row is a NULL row.
  const childNulls = new NullMask(total);
  let off = 0;
  for (let i = 0; i < count; i++) {
    const v = rows[i] as Seq | null | undefined;
    if (v == null) {
      // A NULL array row still occupies `fixed` child slots: zero them (the buffer is reused).
      if (fixed > 0) out.fill(0, off, off + fixed);
      off += fixed;
      continue;
    }
    const base = off;
    if (v.constructor === Ctor) out.set(v as ArrayLike<number>, off);
    else
      out.set(encodeFixed(name, v, v.length, inner, { setNull: (j) => childNulls.setNull(base + j) }) as unknown as ArrayLike<number>, off);
    off += v.length;
  }
  copyInto(child, out);
  childNulls.apply(child);
}

/**
 * BIGINT children: read_versions arrive as Int32Array (the engine's rows) or Float64Array (event indices <
 * 2^53): each becomes two 32-bit halves, low word first.
 */
function writeBigintChildren(child: duckdb.Vector, rows: Seq, count: number, total: number, fixed: number, inner: string): void {
  const out = scratchArray('child', Int32Array, total * 2);
  const childNulls = new NullMask(total);
  let off = 0;
  for (let i = 0; i < count; i++) {
    const v = rows[i] as Seq | null | undefined;
    if (v == null) {
      if (fixed > 0) out.fill(0, 2 * off, 2 * (off + fixed));
      off += fixed;
      continue;
    }
    if (v instanceof Int32Array) {
      for (let j = 0; j < v.length; j++) {
        const x = v[j];
        out[2 * (off + j)] = x;
        out[2 * (off + j) + 1] = x >> 31;
      }
    } else if (v instanceof Float64Array) {
      for (let j = 0; j < v.length; j++) {
        const x = v[j];
        if (!Number.isInteger(x)) fail(inner, j, 'an integer', x);
        out[2 * (off + j)] = (x % TWO32) | 0;
        out[2 * (off + j) + 1] = Math.floor(x / TWO32) | 0;
      }
    } else {
      const base = off;
      const words = encodeFixed('BIGINT', v, v.length, inner, { setNull: (j) => childNulls.setNull(base + j) }) as Int32Array;
      out.set(words, 2 * off);
    }
    off += v.length;
  }
  copyInto(child, out);
  childNulls.apply(child);
}
