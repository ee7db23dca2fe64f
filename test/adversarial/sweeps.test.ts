import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep, type SweepSummary } from '@panta/engine';
import { RHEON6, pantaAsync, tempDir, writeSpec } from '../helpers.js';
import { adversarialSpec, expectNoUsableTags, expectSoundCorpus, expectUnanimous } from './expect-corpus.js';
import { HUGE_LENGTH, IDENTICAL_ANSWER, startAdversarialServer, type AdversarialMode, type AdversarialServer } from './server.js';

// Embedded sweeps against a server whose answers Panta did not write: each completes, verifies, and writes
// order parameters that say what the population did (nulls where a quantity is undefined).

const dir = tempDir('panta-adversarial-');
const servers = new Map<AdversarialMode, AdversarialServer>();
const url = (mode: AdversarialMode) => servers.get(mode)!.url;

/** What a backend that never gives a usable reply needs to be recorded rather than stop the sweep (the health bound off). */
const RECORD_UNUSABLE = (text: string) => text.replace('timeout_ms: 20000}', 'timeout_ms: 20000, max_unusable_share: 1}');

/** The same as `panta run` and `panta verify` did it: exit codes and output. */
type Spawned = Awaited<ReturnType<typeof pantaAsync>>;

/**
 * Every corpus the tests read, by name, each swept once before the first test, two embedded sweeps at a time
 * beside the binary's: a sweep against a local server mostly waits (on its calls, on a mean field's chain, on
 * DuckDB), so two overlap, and a corpus two tests read is swept for both. More at once would share this
 * process's event loop (the servers' too) among hundreds of calls, and a loaded machine would see them time out.
 * A sweep that fails fails the tests that read it, not the others.
 */
const swept = new Map<string, Promise<unknown>>();
const AT_ONCE = 2;
beforeAll(async () => {
  for (const mode of ['never-matching', 'identical', 'empty', 'huge', 'non-utf8', 'control-chars', 'unparsable-verdict', 'mixed'] as const)
    servers.set(mode, await startAdversarialServer({ mode }));
  const queue: (() => void)[] = [];
  let running = 0;
  const next = () => {
    running--;
    queue.shift()?.();
  };
  const start = (name: string, text: string) =>
    new Promise<SweepSummary>((resolve, reject) => {
      const go = () => {
        running++;
        runSweep(writeSpec(dir, text, `${name}.yaml`), { out: join(dir, name), logLevel: 'silent' })
          .then(resolve, reject)
          .finally(next);
      };
      if (running < AT_ONCE) go();
      else queue.push(go);
    });
  swept.set('binary', binary());
  // Wide rows: a mean field of 140 (every row reads all 139 others), one sweep: its events are two chains, which
  // mostly wait, beside the other sweeps. No retries: an empty reply's retry waits a back-off, and a mean field's
  // events wait on each other.
  const meanField = (mode: AdversarialMode) => {
    const name = `meanfield-${mode}`;
    const text = RECORD_UNUSABLE(adversarialSpec(name, RHEON6, url(mode), undefined, 0, 1)).replace(
      'geometries: [ring]\nsizes: [8]',
      'geometries: [meanfield]\nsizes: [140]',
    );
    swept.set(name, text.includes('sizes: [140]') ? start(name, text) : Promise.reject(new Error(`${name}: the spec has no mean field`)));
  };
  const plain = (mode: AdversarialMode, judge?: AdversarialMode, edit = (text: string) => text) => {
    const name = judge ? `${mode}-judged-by-${judge}` : mode;
    swept.set(name, start(name, edit(adversarialSpec(name, RHEON6, url(mode), judge && url(judge)))));
  };
  meanField('identical');
  for (const mode of ['never-matching', 'identical'] as const) plain(mode);
  // Answers of 100,000 characters over one sweep: at t = 1 each agent reads its neighbours' huge answers of t = 0.
  swept.set('huge', start('huge', adversarialSpec('huge', RHEON6, url('huge'), undefined, 1, 1)));
  meanField('empty');
  for (const mode of ['non-utf8', 'control-chars', 'mixed'] as const) plain(mode);
  plain('empty', undefined, RECORD_UNUSABLE);
  plain('unparsable-verdict', 'unparsable-verdict');
  plain('identical', 'unparsable-verdict');
  swept.set('empty-stops', start('empty-stops', adversarialSpec('empty-stops', RHEON6, url('empty'))));
  // Each test awaits its own; a rejection is reported there.
  await Promise.allSettled(swept.values());
}, 600_000);
afterAll(async () => {
  for (const s of servers.values()) await s.close();
});

/** The panta binary's run and verify of never-matching answers judged by a model that cannot grade. */
async function binary(): Promise<{ out: string; run: Spawned; verified: Spawned }> {
  const out = join(dir, 'binary');
  const spec = writeSpec(dir, adversarialSpec('binary', RHEON6, url('never-matching'), url('unparsable-verdict')), 'binary.yaml');
  const run = await pantaAsync(['run', spec, '--out', out]);
  return { out, run, verified: await pantaAsync(['verify', out]) };
}

/** The folder of a corpus swept before the tests, once its sweep is seen complete. */
async function corpus(name: string): Promise<string> {
  const summary = (await swept.get(name)) as SweepSummary;
  expect(summary.status).toBe('complete');
  return summary.out;
}

describe('sweeps against an adversarial OpenAI-compatible server', () => {
  it('never-matching: every answer not_known, rho and delta rho null, FOCUS 0 (a non-answer counts as wrong)', async () => {
    const out = await corpus('never-matching');
    const { order, answers } = await expectSoundCorpus(out);
    expect(answers.every((a) => a.tag === 'not_known' && a.reply_status === 'ok')).toBe(true);
    expect(new Set(answers.map((a) => a.response)).size).toBeGreaterThan(20);
    expectNoUsableTags(order);
    const runs = await queryRows(`SELECT focus, focus_total, drift_onset FROM read_parquet('${out}/runs.parquet')`);
    expect(runs).toHaveLength(2);
    for (const r of runs) expect(r).toMatchObject({ focus: [0, 0], focus_total: 0, drift_onset: null });
  });

  it('identical: m = q = 1 at every sweep; rho 0 where the answer is right, null where it is not known', async () => {
    const { order, answers } = await expectSoundCorpus(await corpus('identical'));
    expect(new Set(answers.map((a) => a.response))).toEqual(new Set([IDENTICAL_ANSWER]));
    expectUnanimous(order);
    for (const o of order) expect(o.rho).toBe(o.prompt_id === 'fq367' ? 0 : null);
  });

  it('empty: the sweep stops, naming the endpoint and the empty replies; with the health bound off, every reply is recorded as "" (reply_status empty, not_known, a unanimous population)', async () => {
    await expect(swept.get('empty-stops')).rejects.toThrow(
      /attempts gave no usable reply \(latest: choices\[0\]\.message\.content is empty\)/,
    );
    const { order, answers } = await expectSoundCorpus(await corpus('empty'));
    for (const a of answers) expect(a).toMatchObject({ response: '', reply_status: 'empty', tag: 'not_known' });
    expectNoUsableTags(order);
    expectUnanimous(order);
  });

  it('wide rows (a mean field of 140: every row reads all agents, parts in row groups under 2,048 rows) hold up against identical and empty replies', async () => {
    for (const mode of ['identical', 'empty'] as const) {
      const out = await corpus(`meanfield-${mode}`);
      expectUnanimous((await expectSoundCorpus(out, 140, 1)).order);
      const groups = await queryRows(`SELECT max(row_group_num_rows) AS most FROM parquet_metadata('${out}/events/*.parquet')`);
      expect(Number(groups[0]!.most)).toBeLessThan(2048);
    }
  });

  it('huge: answers of 100,000 characters are stored whole', async () => {
    const { order, answers } = await expectSoundCorpus(await corpus('huge'), 8, 1);
    for (const a of answers) expect(a.response.length).toBe(HUGE_LENGTH);
    expectNoUsableTags(order);
  });

  it('non-utf8: invalid bytes arrive as U+FFFD and are stored as such', async () => {
    const { answers } = await expectSoundCorpus(await corpus('non-utf8'));
    expect(answers.every((a) => a.response.includes('\ufffd') && a.reply_status === 'ok')).toBe(true);
  });

  it('control-chars: NUL and escape sequences are stored as sent, lone surrogates as U+FFFD', async () => {
    const { answers } = await expectSoundCorpus(await corpus('control-chars'));
    const all = answers.map((a) => a.response).join('');
    expect(all).toContain('\u0000');
    expect(all).toContain('\u001b[');
    expect(Buffer.from(all, 'utf8').toString('utf8')).toBe(all);
  });

  it('mixed: a mixture of all of the above in one population', async () => {
    const { answers } = await expectSoundCorpus(await corpus('mixed'));
    expect(new Set(answers.map((a) => a.reply_status))).toEqual(new Set(['ok', 'empty']));
  });

  it('an LLM judge whose verdicts no parser accepts: every tag judge_failure, rho null', async () => {
    const { order, answers } = await expectSoundCorpus(await corpus('unparsable-verdict-judged-by-unparsable-verdict'));
    expect(answers.every((a) => a.tag === 'judge_failure')).toBe(true);
    expectNoUsableTags(order);
  });

  it('the panta binary: run exits 0 and verify passes (never-matching, judged by a model that cannot grade)', async () => {
    const { out, run, verified } = (await swept.get('binary')) as Awaited<ReturnType<typeof binary>>;
    expect(run.stderr).not.toMatch(/error|fail/i);
    expect(run.code).toBe(0);
    expect(verified.stdout + verified.stderr).toContain('complete and consistent');
    expect(verified.code).toBe(0);
    expectNoUsableTags((await expectSoundCorpus(out)).order);
  });

  it('the LLM judge too: never-matching and identical answers graded by a model that cannot grade', async () => {
    // Never-matching answers so graded are the binary's corpus (the same spec but its name).
    const { out } = (await swept.get('binary')) as Awaited<ReturnType<typeof binary>>;
    expectNoUsableTags((await expectSoundCorpus(out)).order);
    const { order } = await expectSoundCorpus(await corpus('identical-judged-by-unparsable-verdict'));
    expectUnanimous(order);
    expectNoUsableTags(order);
  });
});
