import { describe, expect, it } from 'vitest';
import { cjsPackagesLoaded } from '../../../test/helpers.js';

const FIXTURE = new URL('./fixtures/tiny-encoder', import.meta.url).pathname;

describe('onnxruntime-node', () => {
  it('is not loaded with the packages (every panta process loads them; only a BERTScore runs a model in its thread), and is with the first scorer', () => {
    const start = cjsPackagesLoaded("await import('@panta/studies');");
    expect([...start].some((p) => p.startsWith('@duckdb/'))).toBe(true); // the listing sees what the packages do load (DuckDB's bindings)
    expect([...start].some((p) => p.startsWith('onnxruntime-node/'))).toBe(false);
    const scored = cjsPackagesLoaded(
      `const { BertScorer } = await import('@panta/embed'); const s = await BertScorer.open({ path: ${JSON.stringify(FIXTURE)} }); console.log((await s.score([['a b', ['a c']]]))[0].f1 > 0);`,
    );
    expect([...scored].some((p) => p.startsWith('onnxruntime-node/'))).toBe(true);
  });
});
