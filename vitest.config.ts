import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests run on the sources: each @panta/* import points at the package's src barrel, so no build is needed
// for unit tests. Tests that spawn the `panta` binary use the build that `npm test` makes first.
const root = fileURLToPath(new URL('.', import.meta.url));
const alias = Object.fromEntries(readdirSync(`${root}packages`).map((p) => [`@panta/${p}`, `${root}packages/${p}/src/index.ts`]));

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files mostly wait (model latencies, child processes, Redis): one per core, at least two, instead of
    // Vitest's cores - 1, which ran them one at a time on a 2-core machine (781 s; 431 s with two).
    maxWorkers: Math.max(2, availableParallelism()),
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
