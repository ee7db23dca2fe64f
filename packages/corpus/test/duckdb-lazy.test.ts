import { describe, expect, it } from 'vitest';
import { cjsPackagesLoaded } from '../../../test/helpers.js';

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
