/**
 * Equal answers embed equally, so a population holds few distinct vectors: measure each once. Vectors are
 * keyed by a 32-bit hash of their bytes and compared exactly on a hit, so a collision can never mix two.
 */
export class VectorCache<T> {
  private readonly buckets = new Map<number, { vector: Float32Array; value: T }[]>();
  private size = 0;

  constructor(private readonly limit = 100_000) {}

  get(vector: Float32Array, make: (copy: Float32Array) => T): T {
    const words = new Uint32Array(vector.buffer, vector.byteOffset, vector.length);
    // A strided hash (every 7th word, about 55 of 384) is enough to spread distinct answers; a hit is
    // confirmed by comparing every value, so the stride costs nothing in exactness.
    let h = 0x811c9dc5 ^ words.length;
    for (let i = 0; i < words.length; i += 7) h = Math.imul(h ^ words[i]!, 0x01000193);
    const bucket = this.buckets.get(h);
    if (bucket) {
      for (const entry of bucket) if (equal(entry.vector, vector)) return entry.value;
    }
    if (this.size >= this.limit) {
      this.buckets.clear();
      this.size = 0;
    }
    const copy = vector.slice();
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

function equal(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return false;
  return true;
}
