import { expect } from 'vitest';

// Every study registered into the library's registries, as every `panta` command registers them, for the
// tests that call the library directly. Loaded only where a test file can reach what they register, since
// loading them costs a file that imports core alone a second or more: core's own tests (pure logic) see none;
// the report's sections (which load the chart renderer) only the report's and the studies' tests.
const file = expect.getState().testPath ?? '';
if (!file.includes('/packages/core/test/')) await import('@panta/studies');
if (file.includes('/packages/report/test/') || file.includes('/packages/studies/test/')) await import('@panta/studies/report');
