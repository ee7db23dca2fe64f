import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const FIXTURE = new URL('./fixtures/tiny-encoder', import.meta.url).pathname;

/** Runs `code` in a fresh Node process (the built packages) and lists the CommonJS packages it loaded. */
function cjsPackagesLoaded(code: string): Set<string> {
  const list = `const { createRequire } = await import('node:module'); const keys = Object.keys(createRequire(import.meta.url).cache); console.log(JSON.stringify([...new Set(keys.map((k) => k.split('node_modules/').pop().split('/')[0]))]));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `${code}\n${list}`], { cwd: root, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return new Set(JSON.parse(r.stdout.trim().split('\n').at(-1)!) as string[]);
}

describe('onnxruntime-node', () => {
  it('is not loaded with the packages (every panta process loads them; only a BERTScore runs a model in its thread), and is with the first scorer', () => {
    const start = cjsPackagesLoaded("await import('@panta/studies');");
    expect(start.has('@duckdb')).toBe(true); // the listing sees what the packages do load (DuckDB's bindings)
    expect(start.has('onnxruntime-node')).toBe(false);
    const scored = cjsPackagesLoaded(
      `const { BertScorer } = await import('@panta/embed'); const s = await BertScorer.open({ path: ${JSON.stringify(FIXTURE)} }); console.log((await s.score([['a b', ['a c']]]))[0].f1 > 0);`,
    );
    expect(scored.has('onnxruntime-node')).toBe(true);
  });
});
