import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests run on the sources: each @panta/* import points at the package's src barrel, so no build is needed
// for unit tests. Tests that spawn the `panta` binary use the build that `npm test` makes first.
const root = fileURLToPath(new URL('.', import.meta.url));
// A package's subpath export has an alias of its own, before the package's (an alias matches a prefix: the
// package's would turn `@panta/studies/report` into `.../src/index.ts/report`).
const subpaths = { '@panta/studies/report': `${root}packages/studies/src/report.ts` };
const alias = {
  ...subpaths,
  ...Object.fromEntries(readdirSync(`${root}packages`).map((p) => [`@panta/${p}`, `${root}packages/${p}/src/index.ts`])),
};

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // Every study registered into the library's registries, as the CLI does at startup.
    setupFiles: ['./test/setup-studies.ts'],
    // The end-to-end tests (every role killed and resumed, Slurm scripts, 650 fuzzed specs) take up to ~35 s on a
    // loaded 2-core machine: a timeout at least twice the slowest keeps a loaded run from failing on time alone.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Test files mostly wait (model latencies, child processes, Redis): one more than the cores, at least three,
    // instead of Vitest's cores - 1, which ran them one at a time on a 2-core machine (781 s; 431 s with two at
    // 659 tests; at 861 tests, 572 s with two and 428 s with three).
    maxWorkers: Math.max(3, availableParallelism() + 1),
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
