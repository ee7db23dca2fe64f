/**
 * Equal answers embed equally, so a population holds few distinct vectors: measure each once. Vectors are
 * keyed by a 32-bit hash of their bytes and compared exactly on a hit, so a collision can never mix two.
 */
export class VectorCache<T> {
  private readonly buckets = new Map<number, { vector: Float32Array; value: T }[]>();
  private size = 0;

  constructor(private readonly limit = 100_000) {}

  /**
   * The value of the vector at data[offset, offset + dim): a column of a batch is read in place, without a
   * view per row (the final pass looks up every row of the sweep).
   */
  getAt(data: Float32Array, offset: number, dim: number, make: (copy: Float32Array) => T): T {
    // A strided hash (every 7th value, about 55 of 384) is enough to spread distinct answers; a hit is
    // confirmed by comparing every value, so the stride costs nothing in exactness. The hash reads each
    // float's bits through one scratch float, so no integer view is made per array (a trace hashes one
    // fresh array per answer).
    let h = 0x811c9dc5 ^ dim;
    for (let i = 0; i < dim; i += 7) {
      FLOAT[0] = data[offset + i];
      h = Math.imul(h ^ BITS[0], 0x01000193);
    }
    const bucket = this.buckets.get(h);
    if (bucket) {
      for (const entry of bucket) if (equalAt(entry.vector, data, offset, dim)) return entry.value;
    }
    if (this.size >= this.limit) {
      this.buckets.clear();
      this.size = 0;
    }
    const copy = data.slice(offset, offset + dim);
    const value = make(copy);
    const list = this.buckets.get(h);
    if (list) list.push({ vector: copy, value });
    else this.buckets.set(h, [{ vector: copy, value }]);
    this.size++;
    return value;
  }

  /** Every distinct vector with its value, in an order fixed by the order they were first seen. */
  *entries(): IterableIterator<[Float32Array, T]> {
    for (const bucket of this.buckets.values()) for (const e of bucket) yield [e.vector, e.value];
  }
}

const FLOAT = new Float32Array(1);
const BITS = new Uint32Array(FLOAT.buffer);

function equalAt(a: Float32Array, data: Float32Array, offset: number, dim: number): boolean {
  if (a.length !== dim) return false;
  for (let i = 0; i < dim; i++) {
    const x = data[offset + i];
    if (a[i] !== x && !(Number.isNaN(a[i]) && Number.isNaN(x))) return false;
  }
  return true;
}
