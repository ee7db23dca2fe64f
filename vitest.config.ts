import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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

const TESTS = ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'];
/**
 * Test files that share a worker's modules (see `projects` below): folders whose files were run together that way
 * and change no state another file reads. Not core's tests (they must see no study registered: CORE_SHARED below), nor a file that
 * registers something of its own into the library's registries (a protocol, a secret): llm's breaker test
 * registers a secret and test/add-a-protocol.test.ts a protocol, so they run alone. So does cluster's
 * kv-limited.test.ts, whose in-process model server times its service against the roles' timeouts: it failed
 * shared in a loaded full run (a request sent twice) and passes alone, as it did isolated.
 */
const ALONE = new Set(['breaker.test.ts', 'add-a-protocol.test.ts', 'kv-limited.test.ts']);
/** A folder's test files, its subfolders' too, but those that run alone. */
const sharedIn = (folder: string) =>
  readdirSync(`${root}${folder}`, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts') && !ALONE.has(basename(f)))
    .map((f) => `${folder}/${f}`);
/**
 * Core's files but those that register into its registries (a protocol, a secret) share a worker's modules among
 * themselves (a project of their own: Vitest reuses a worker only within a project, so none of them sees a study).
 */
const CORE_ALONE = new Set(['budget.test.ts', 'redact.test.ts']);
const CORE_SHARED =
  process.env.PANTA_TEST_ISOLATE === '1'
    ? []
    : readdirSync(`${root}packages/core/test`)
        .filter((f) => f.endsWith('.test.ts') && !CORE_ALONE.has(f))
        .map((f) => `packages/core/test/${f}`);
const SHARED =
  process.env.PANTA_TEST_ISOLATE === '1'
    ? []
    : [
        ...['engine', 'corpus', 'embed', 'judge', 'studies', 'report', 'cli'].map((p) => `packages/${p}/test/**/*.test.ts`),
        ...sharedIn('packages/llm/test'),
        ...sharedIn('packages/cluster/test'),
        ...sharedIn('test'),
      ];

/**
 * Vitest's order (the longest files first, by the last run's times or, in a fresh clone, by size), the files that
 * share modules before the rest: a worker is reused only while the next file in the queue shares too, and
 * Vitest would put the `isolated` project, first by name, before all of them (the slow engine and corpus files last).
 */
class SharedFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // One project after the other: a worker goes on only to a file of its own project.
    const rank = (f: TestSpecification) => (f.project.config.isolate !== false ? 2 : f.project.name === 'core' ? 1 : 0);
    return [0, 1, 2].flatMap((r) => sorted.filter((f) => rank(f) === r));
  }
}

export default defineConfig({
  resolve: { alias },
  test: {
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
    sequence: { sequencer: SharedFirst },
    // Each test file imports most of the library (the studies' setup alone loads core, corpus, llm and report):
    // 0.5 to 1 s of a worker's time per file on an idle machine, ~115 s of the suite's. The SHARED files run
    // with isolate: false (a worker runs one file after another, loading each module once); the rest each
    // with a module graph of its own (all of them with PANTA_TEST_ISOLATE=1). Each project names its own files:
    // `extends: true` would add a root `include` to theirs.
    projects: [
      ...(SHARED.length > 0 ? [{ extends: true as const, test: { name: 'shared', include: SHARED, isolate: false } }] : []),
      ...(CORE_SHARED.length > 0 ? [{ extends: true as const, test: { name: 'core', include: CORE_SHARED, isolate: false } }] : []),
      { extends: true, test: { name: 'isolated', include: TESTS, exclude: [...SHARED, ...CORE_SHARED, '**/node_modules/**'] } },
    ],
  },
});
