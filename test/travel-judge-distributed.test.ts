import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { expectVerified, redisPerFile } from '../packages/cluster/test/roles.js';
import { ROOT, tempDir, writeSpec } from './helpers.js';

// examples/ssvp-travel.yaml on two scenarios, one trial, judged by the surrogate as an LLM judge.
const SPEC = readFileSync(join(ROOT, 'examples', 'ssvp-travel.yaml'), 'utf8')
  .replace('../datasets/', `${ROOT}/datasets/`)
  .replace('file: travel-roles.jsonl', `file: ${ROOT}/examples/travel-roles.jsonl`)
  .replace(/^out: .*$/m, '')
  .replace('trials: 30', 'trials: 1\ntrial_prompts: every\nprompts: [travel-barcelona, travel-tokyo]')
  .replace('judge: {kind: reference}', 'judge: {kind: llm, backend: {kind: surrogate}}');

const dir = tempDir('panta-travel-judge-cluster-');
const { roles } = redisPerFile(dir);

/**
 * The embedded sweep's corpus, run once for the file: the sweep's name is in no row of travel.parquet (nor in a
 * seed), so both distributed runs are held to the same one.
 */
let embeddedOnce: Promise<string> | undefined;
function embeddedCorpus(): Promise<string> {
  embeddedOnce ??= (async () => {
    const embedded = join(dir, 'embedded');
    const specFile = writeSpec(dir, SPEC.replace(/^name: .*$/m, 'name: travel-embedded'), 'travel-embedded.yaml');
    const result = await runSweep(specFile, { out: embedded, logLevel: 'silent' });
    if (result.status !== 'complete') throw new Error(`the embedded corpus is ${result.status}`);
    return embedded;
  })();
  return embeddedOnce;
}

// Five or six `panta` processes and an embedded sweep per test: 28-32 s on a 2-core machine running the suite, over
// 120 s at a load of 40: four minutes, as distributed.test.ts gives its tests.
describe('the LLM judge on the travel table in distributed mode (a real redis-server)', { timeout: 240_000 }, () => {
  // One collector, and the runs split over two (the first finishes the corpus with its own judge).
  it.each([1, 2])(
    '%i collector(s) score travel.parquet with the LLM judge at finish, as the embedded sweep does, and it verifies',
    async (k) => {
      expect(SPEC).toContain('judge: {kind: llm');
      const specFile = writeSpec(dir, SPEC.replace(/^name: .*$/m, `name: travel-k${k}`), `travel-k${k}.yaml`);
      const out = join(dir, `distributed-k${k}`);
      const collectors = Array.from({ length: k }, () =>
        roles.spawn(['collector', '--out', out, '--durable-ms', '300', ...(k > 1 ? ['--shard', 'auto'] : [])]),
      );
      const workers = [0, 1].map(() => roles.spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']));
      const scheduler = roles.spawn(['scheduler', specFile, '--watch-ms', '3000', '--collectors', String(k)]);
      const scheduled = await scheduler.exited;
      expect(scheduled.code, scheduled.stderr).toBe(0);
      expect(await Promise.all(collectors.map(async (c) => (await c.exited).code))).toEqual(collectors.map(() => 0));
      for (const w of workers) w.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));

      const embedded = await embeddedCorpus();
      const table = (o: string) => queryRows(`SELECT * FROM read_parquet('${o}/travel.parquet') ORDER BY run_id`);
      const rows = await table(out);
      expect(rows.length).toBe(6);
      expect(new Set(rows.map((r) => r.judge))).toEqual(new Set(['surrogate:surrogate-potts-v1']));
      expect(rows.some((r) => r.hr !== null)).toBe(true);
      expect(rows).toEqual(await table(embedded));
      await expectVerified(out);
    },
  );
});
