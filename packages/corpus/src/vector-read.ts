import duckdb from '@duckdb/node-bindings';
import type { SqlType } from './sql-type.js';

/**
 * Column-at-a-time readers from a raw (flat) DuckDB result vector into cheap JS forms.
 *
 * Why not node-api's `getColumnValues` / `getRowObjects`: they build a DuckDBListValue or DuckDBArrayValue
 * per row and box every float, and BIGINTs come back as bigint. Here a fixed-size embedding column is one
 * bulk copy of the ARRAY (or LIST) child's floats into a Float32Array of rows x dim, list columns are typed
 * array slices of the child data, and int64 values are rebuilt as numbers from two 32-bit halves (exact
 * below 2^53, which event indices and seeds are).
 *
 * Forms, by type:
 * - INTEGER, DOUBLE, FLOAT, BIGINT -> number[]; TIMESTAMP -> number[] (epoch milliseconds);
 *   VARCHAR -> string[]; BOOLEAN -> boolean[]; NULL -> null.
 * - T[d] with numeric T -> ONE flat typed array of rows x d (Float32Array for FLOAT, Float64Array for
 *   DOUBLE and BIGINT, Int32Array for INTEGER); a NULL row reads as NaN (zeros for INTEGER).
 * - FLOAT[] read with `flat` -> as FLOAT[d] (every row must have the same length); Parquet has no
 *   fixed-size list, so an embedding column comes back from a file as FLOAT[] and is read this way.
 * - INTEGER[] -> Int32Array[]; BIGINT[] and DOUBLE[] -> Float64Array[]; FLOAT[] -> Float32Array[];
 *   other lists -> arrays of the element forms above.
 */

const TWO32 = 4294967296;

/** Per-column values of a batch. `any[]` on purpose: the form depends on the column (see above). */
// biome-ignore lint/suspicious/noExplicitAny: a column of any SQL type; callers know the type of the column they asked for
export type ColumnValues = any[] | Float32Array | Float64Array | Int32Array;

/** A decoded column: `dim` is set for flat fixed-size columns (values hold rows x dim numbers). */
export interface DecodedColumn {
  values: ColumnValues;
  dim?: number;
}

type TypedCtor<T> = { new (buffer: ArrayBuffer, byteOffset: number, length: number): T; BYTES_PER_ELEMENT: number };

/**
 * A typed view of a vector's first `count` values. `vector_get_data` returns a fresh copy of the vector's
 * memory (the bindings are built without external buffers; a test checks it), so the view outlives the
 * chunk; when it is not aligned for the element type we copy it once more.
 */
function typedData<T>(vector: duckdb.Vector, count: number, Ctor: TypedCtor<T>): T {
  const bytes = duckdb.vector_get_data(vector, count * Ctor.BYTES_PER_ELEMENT);
  if (bytes.byteOffset % Ctor.BYTES_PER_ELEMENT === 0) return new Ctor(bytes.buffer as ArrayBuffer, bytes.byteOffset, count);
  const copy = bytes.slice();
  return new Ctor(copy.buffer, 0, count);
}

/** The validity bitmap of a vector, or null when every row is valid. */
function validityOf(vector: duckdb.Vector, count: number): Uint8Array | null {
  const v = duckdb.vector_get_validity(vector, Math.ceil(count / 64) * 8) as Uint8Array | null;
  return v ?? null;
}

function isValid(mask: Uint8Array | null, i: number): boolean {
  return mask === null || ((mask[i >> 3] >> (i & 7)) & 1) === 1;
}

/** Int64 values as numbers (from signed high and unsigned low words). */
function int64Numbers(vector: duckdb.Vector, count: number): Float64Array {
  const lo = typedData(vector, count * 2, Uint32Array);
  const hi = new Int32Array(lo.buffer, lo.byteOffset, count * 2);
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) out[i] = hi[2 * i + 1] * TWO32 + lo[2 * i];
  return out;
}

const decoder = new TextDecoder();

function readStrings(vector: duckdb.Vector, count: number, mask: Uint8Array | null): (string | null)[] {
  const out: (string | null)[] = new Array(count);
  if (count === 0) return out;
  // duckdb_string_t is 16 bytes: uint32 length, then either 12 inline bytes or a 4-byte prefix + pointer.
  const bytes = duckdb.vector_get_data(vector, count * 16);
  const words =
    bytes.byteOffset % 4 === 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset, count * 4) : new Uint32Array(bytes.slice().buffer);
  // Repeated values (run_id, model, tag...) share their 16-byte slot or their heap pointer with the
  // previous row far more often than not: reuse the decoded string instead of decoding again.
  let p0 = -1,
    p1 = -1,
    p2 = -1,
    p3 = -1;
  let prev: string | null = null;
  for (let i = 0; i < count; i++) {
    if (!isValid(mask, i)) {
      out[i] = null;
      continue;
    }
    const w0 = words[4 * i],
      w1 = words[4 * i + 1],
      w2 = words[4 * i + 2],
      w3 = words[4 * i + 3];
    if (prev !== null && w0 === p0 && w2 === p2 && w3 === p3 && (w0 > 12 || w1 === p1)) {
      out[i] = prev;
      continue;
    }
    const len = w0;
    let s: string;
    if (len <= 12) s = decoder.decode(bytes.subarray(16 * i + 4, 16 * i + 4 + len));
    else s = decoder.decode(duckdb.get_data_from_pointer(bytes.buffer as ArrayBuffer, bytes.byteOffset + 16 * i + 8, len));
    out[i] = prev = s;
    p0 = w0;
    p1 = w1;
    p2 = w2;
    p3 = w3;
  }
  return out;
}

/** Reads `count` values of a vector of type `type`. `flat` asks for a FLOAT[] list to be read as FLOAT[d]. */
export function readVector(vector: duckdb.Vector, type: SqlType, count: number, flat = false): DecodedColumn {
  if (type.kind === 'scalar') return { values: readScalars(vector, type.name, count) };
  if (type.kind === 'array') return readArray(vector, type.child, type.size, count);
  return readList(vector, type.child, count, flat);
}

function readScalars(vector: duckdb.Vector, name: string, count: number): ColumnValues {
  const mask = validityOf(vector, count);
  if (name === 'VARCHAR') return readStrings(vector, count, mask);
  let nums: ArrayLike<number>;
  switch (name) {
    case 'INTEGER':
      nums = typedData(vector, count, Int32Array);
      break;
    case 'DOUBLE':
      nums = typedData(vector, count, Float64Array);
      break;
    case 'FLOAT':
      nums = typedData(vector, count, Float32Array);
      break;
    case 'BIGINT':
      nums = int64Numbers(vector, count);
      break;
    case 'TIMESTAMP': {
      const us = int64Numbers(vector, count);
      for (let i = 0; i < count; i++) us[i] /= 1000;
      nums = us;
      break;
    }
    case 'BOOLEAN': {
      const b = typedData(vector, count, Uint8Array);
      const out: (boolean | null)[] = new Array(count);
      for (let i = 0; i < count; i++) out[i] = isValid(mask, i) ? b[i] !== 0 : null;
      return out;
    }
    default:
      throw new Error(`readScalars: unsupported ${name}`);
  }
  const out: (number | null)[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = isValid(mask, i) ? nums[i] : null;
  return out;
}

/**
 * A numeric child's values as one typed array, or undefined for non-numeric children. `copy` detaches the
 * result from the vector's memory (needed when the array itself is handed out).
 */
function numericChild(child: duckdb.Vector, type: SqlType, n: number, copy: boolean): Int32Array | Float32Array | Float64Array | undefined {
  if (type.kind !== 'scalar') return undefined;
  switch (type.name) {
    case 'INTEGER': {
      const a = typedData(child, n, Int32Array);
      return copy ? a.slice() : a;
    }
    case 'FLOAT': {
      const a = typedData(child, n, Float32Array);
      return copy ? a.slice() : a;
    }
    case 'DOUBLE': {
      const a = typedData(child, n, Float64Array);
      return copy ? a.slice() : a;
    }
    case 'BIGINT':
      return int64Numbers(child, n);
    default:
      return undefined;
  }
}

function readArray(vector: duckdb.Vector, childType: SqlType, size: number, count: number): DecodedColumn {
  const mask = validityOf(vector, count);
  const child = duckdb.array_vector_get_child(vector);
  const nums = numericChild(child, childType, count * size, true);
  if (nums) {
    if (mask && !(nums instanceof Int32Array))
      for (let i = 0; i < count; i++) if (!isValid(mask, i)) nums.fill(NaN, i * size, (i + 1) * size);
    return { values: nums, dim: size };
  }
  const inner = readVector(child, childType, count * size).values as unknown[];
  const out: (unknown[] | null)[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = isValid(mask, i) ? inner.slice(i * size, (i + 1) * size) : null;
  return { values: out };
}

function readList(vector: duckdb.Vector, childType: SqlType, count: number, flat: boolean): DecodedColumn {
  const mask = validityOf(vector, count);
  // list_entry_t: uint64 offset, uint64 length.
  const entries = typedData(vector, count * 4, Uint32Array);
  const size = duckdb.list_vector_get_size(vector);
  const child = duckdb.list_vector_get_child(vector);
  const off = (i: number) => entries[4 * i] + entries[4 * i + 1] * TWO32;
  const len = (i: number) => entries[4 * i + 2];

  if (flat && childType.kind === 'scalar' && childType.name === 'FLOAT') {
    const dim = count > 0 ? len(0) : 0;
    const src = typedData(child, size, Float32Array);
    let contiguous = true;
    for (let i = 0; i < count; i++) {
      if (!isValid(mask, i))
        throw new Error(`flat FLOAT[] column: row ${i} is NULL (only answers carry embeddings: read them with role = 'agent')`);
      if (len(i) !== dim) throw new Error(`flat FLOAT[] column: row ${i} has ${len(i)} values, row 0 has ${dim}`);
      if (off(i) !== i * dim) contiguous = false;
    }
    // The usual case (a freshly read list vector) is one contiguous run. The bindings hand back a fresh copy
    // of the vector's memory (they may not expose DuckDB's own): that copy is the column, no second one.
    if (contiguous) return { values: src.subarray(0, count * dim), dim };
    const out = new Float32Array(count * dim);
    for (let i = 0; i < count; i++) out.set(src.subarray(off(i), off(i) + dim), i * dim);
    return { values: out, dim };
  }

  const nums = numericChild(child, childType, size, false);
  if (nums) {
    const out: (Int32Array | Float32Array | Float64Array | null)[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = isValid(mask, i) ? nums.slice(off(i), off(i) + len(i)) : null;
    return { values: out };
  }
  const inner = readVector(child, childType, size).values as unknown[];
  const out: (unknown[] | null)[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = isValid(mask, i) ? inner.slice(off(i), off(i) + len(i)) : null;
  return { values: out };
}
