/**
 * node-api's JS conversion gives BIGINT as bigint, which JSON, arithmetic with numbers and most callers
 * choke on. Corpus integers (counts, seeds, event indices, token totals) are far below 2^53, so they
 * become numbers; a bigint that would lose precision is kept as a bigint rather than silently rounded.
 */
export function toPlain(v: unknown): unknown {
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(toPlain);
  if (v !== null && typeof v === 'object' && !(v instanceof Date) && !ArrayBuffer.isView(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toPlain(x);
    return out;
  }
  return v;
}
