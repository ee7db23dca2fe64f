import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/** Runs `code` in a fresh Node process (the built packages) and lists the CommonJS packages it loaded. */
function cjsPackagesLoaded(code: string): Set<string> {
  const list = `const { createRequire } = await import('node:module'); const keys = Object.keys(createRequire(import.meta.url).cache); console.log(JSON.stringify([...new Set(keys.map((k) => k.split('node_modules/').pop().split('/').slice(0, 2).join('/')))]));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `${code}\n${list}`], { cwd: root, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return new Set(JSON.parse(r.stdout.trim().split('\n').at(-1)!) as string[]);
}

describe('@duckdb/node-api and bullmq', () => {
  it('are not loaded with the packages (a worker or a scheduler never opens DuckDB, a collector never takes a job), and node-api is with the first instance', () => {
    const roles = cjsPackagesLoaded("await import('@panta/cluster'); await import('@panta/engine');");
    expect(roles.has('pino/pino.js')).toBe(true); // the listing sees what the packages do load
    expect([...roles].filter((p) => p.startsWith('@duckdb/node-api') || p.startsWith('bullmq'))).toEqual([]);
    const queue = cjsPackagesLoaded("const { bullmq } = await import('./packages/cluster/dist/cjs-deps.js'); bullmq();");
    expect(queue.has('bullmq/dist')).toBe(true);
    const used = cjsPackagesLoaded(
      "const { getConnection, closeDuckDB } = await import('@panta/corpus'); const c = await getConnection(); await c.run('SELECT 1'); await closeDuckDB();",
    );
    expect([...used].filter((p) => p.startsWith('@duckdb/node-api')).length).toBeGreaterThan(0);
  });
});
