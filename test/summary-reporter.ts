import type { Reporter, TestCase, TestModule } from 'vitest/node';

/** How many of the slowest tests the closing lines name. */
const SLOWEST = 5;

/**
 * Ends the run with the plain line `tests: N passed, N failed, N skipped`, which CI tools read whatever
 * the runner (vitest's own summary is meant for people). Before it, the slowest tests with their time against
 * their own timeout, and `near timeout:` naming every test that took more than half of its timeout (none is
 * the goal: a test within 2x of its timeout fails on a loaded machine on time alone).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const timed: { test: TestCase; ms: number; timeout: number }[] = [];
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
        if (state !== 'skipped' && t.options.timeout)
          timed.push({ test: t, ms: t.diagnostic()?.duration ?? 0, timeout: t.options.timeout });
      }
    }
    process.stdout.write(timingLines(timed));
    process.stdout.write(`\ntests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}

function timingLines(timed: { test: TestCase; ms: number; timeout: number }[]): string {
  const name = (t: TestCase) => `${t.module.relativeModuleId} > ${t.fullName}`;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const slowest = [...timed].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
  const near = timed.filter((t) => t.ms * 2 > t.timeout);
  const lines = slowest.map((t) => `slowest: ${s(t.ms)} of ${s(t.timeout)}  ${name(t.test)}`);
  lines.push(
    `near timeout (over half of it): ${near.length === 0 ? 'none' : near.map((t) => `${name(t.test)} ${s(t.ms)} of ${s(t.timeout)}`).join('; ')}`,
  );
  return `\n${lines.join('\n')}\n`;
}
