/** A key that identifies an embedding by its exact bytes: equal answers embed equally and are measured once. */
export function vectorKey(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1');
}
