import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { RHEON6, pantaAsync, tempDir, writeSpec } from '../helpers.js';
import { adversarialSpec, expectNoUsableTags, expectSoundCorpus, expectUnanimous } from './expect-corpus.js';
import { HUGE_LENGTH, IDENTICAL_ANSWER, startAdversarialServer, type AdversarialMode, type AdversarialServer } from './server.js';

// Embedded sweeps against a server whose answers Panta did not write: each completes, verifies, and writes
// order parameters that say what the population did (nulls where a quantity is undefined).

const dir = tempDir('panta-adversarial-');
const servers = new Map<AdversarialMode, AdversarialServer>();
beforeAll(async () => {
  for (const mode of ['never-matching', 'identical', 'empty', 'huge', 'non-utf8', 'control-chars', 'unparsable-verdict', 'mixed'] as const)
    servers.set(mode, await startAdversarialServer({ mode }));
});
afterAll(async () => {
  for (const s of servers.values()) await s.close();
});

/** What a backend that never gives a usable reply needs to be recorded rather than stop the sweep (the health bound off). */
const RECORD_UNUSABLE = (text: string) => text.replace('timeout_ms: 20000}', 'timeout_ms: 20000, max_unusable_share: 1}');

async function sweep(mode: AdversarialMode, judge?: AdversarialMode, edit = (text: string) => text): Promise<string> {
  const name = judge ? `${mode}-judged-by-${judge}` : mode;
  const out = join(dir, name);
  const text = edit(adversarialSpec(name, RHEON6, servers.get(mode)!.url, judge && servers.get(judge)!.url));
  const spec = writeSpec(dir, text, `${name}.yaml`);
  const result = await runSweep(spec, { out, logLevel: 'silent' });
  expect(result.status).toBe('complete');
  return out;
}

describe('sweeps against an adversarial OpenAI-compatible server', () => {
  it('never-matching: every answer not_known, rho and delta rho null, FOCUS 0 (a non-answer counts as wrong)', async () => {
    const out = await sweep('never-matching');
    const { order, answers } = await expectSoundCorpus(out);
    expect(answers.every((a) => a.tag === 'not_known' && a.reply_status === 'ok')).toBe(true);
    expect(new Set(answers.map((a) => a.response)).size).toBeGreaterThan(20);
    expectNoUsableTags(order);
    const runs = await queryRows(`SELECT focus, focus_total, drift_onset FROM read_parquet('${out}/runs.parquet')`);
    expect(runs).toHaveLength(2);
    for (const r of runs) expect(r).toMatchObject({ focus: [0, 0], focus_total: 0, drift_onset: null });
  });

  it('identical: m = q = 1 at every sweep; rho 0 where the answer is right, null where it is not known', async () => {
    const { order, answers } = await expectSoundCorpus(await sweep('identical'));
    expect(new Set(answers.map((a) => a.response))).toEqual(new Set([IDENTICAL_ANSWER]));
    expectUnanimous(order);
    for (const o of order) expect(o.rho).toBe(o.prompt_id === 'fq367' ? 0 : null);
  });

  it('empty: the sweep stops, naming the endpoint and the empty replies; with the health bound off, every reply is recorded as "" (reply_status empty, not_known, a unanimous population)', async () => {
    const stopped = writeSpec(dir, adversarialSpec('empty-stops', RHEON6, servers.get('empty')!.url), 'empty-stops.yaml');
    await expect(runSweep(stopped, { out: join(dir, 'empty-stops'), logLevel: 'silent' })).rejects.toThrow(
      /attempts gave no usable reply \(latest: choices\[0\]\.message\.content is empty\)/,
    );
    const { order, answers } = await expectSoundCorpus(await sweep('empty', undefined, RECORD_UNUSABLE));
    for (const a of answers) expect(a).toMatchObject({ response: '', reply_status: 'empty', tag: 'not_known' });
    expectNoUsableTags(order);
    expectUnanimous(order);
  });

  it('wide rows (a mean field of 140: every row reads all agents, parts in row groups under 2,048 rows) hold up against identical and empty replies', async () => {
    for (const mode of ['identical', 'empty'] as const) {
      const name = `meanfield-${mode}`;
      const out = join(dir, name);
      // No retries: an empty reply's retry waits a back-off, and a mean field's events wait on each other.
      const text = RECORD_UNUSABLE(adversarialSpec(name, RHEON6, servers.get(mode)!.url, undefined, 0)).replace(
        'geometries: [ring]\nsizes: [8]',
        'geometries: [meanfield]\nsizes: [140]',
      );
      expect(text).toContain('sizes: [140]');
      expect((await runSweep(writeSpec(dir, text, `${name}.yaml`), { out, logLevel: 'silent' })).status).toBe('complete');
      expectUnanimous((await expectSoundCorpus(out, 140)).order);
      const groups = await queryRows(`SELECT max(row_group_num_rows) AS most FROM parquet_metadata('${out}/events/*.parquet')`);
      expect(Number(groups[0]!.most)).toBeLessThan(2048);
    }
  }, 120_000);

  it('huge: answers of 100,000 characters are stored whole', async () => {
    const { order, answers } = await expectSoundCorpus(await sweep('huge'));
    for (const a of answers) expect(a.response.length).toBe(HUGE_LENGTH);
    expectNoUsableTags(order);
  });

  it('non-utf8: invalid bytes arrive as U+FFFD and are stored as such', async () => {
    const { answers } = await expectSoundCorpus(await sweep('non-utf8'));
    expect(answers.every((a) => a.response.includes('\ufffd') && a.reply_status === 'ok')).toBe(true);
  });

  it('control-chars: NUL and escape sequences are stored as sent, lone surrogates as U+FFFD', async () => {
    const { answers } = await expectSoundCorpus(await sweep('control-chars'));
    const all = answers.map((a) => a.response).join('');
    expect(all).toContain('\u0000');
    expect(all).toContain('\u001b[');
    expect(Buffer.from(all, 'utf8').toString('utf8')).toBe(all);
  });

  it('mixed: a mixture of all of the above in one population', async () => {
    const { answers } = await expectSoundCorpus(await sweep('mixed'));
    expect(new Set(answers.map((a) => a.reply_status))).toEqual(new Set(['ok', 'empty']));
  });

  it('an LLM judge whose verdicts no parser accepts: every tag judge_failure, rho null', async () => {
    const { order, answers } = await expectSoundCorpus(await sweep('unparsable-verdict', 'unparsable-verdict'));
    expect(answers.every((a) => a.tag === 'judge_failure')).toBe(true);
    expectNoUsableTags(order);
  });

  it('the panta binary: run exits 0 and verify passes (never-matching, judged by a model that cannot grade)', async () => {
    const out = join(dir, 'binary');
    const spec = writeSpec(
      dir,
      adversarialSpec('binary', RHEON6, servers.get('never-matching')!.url, servers.get('unparsable-verdict')!.url),
      'binary.yaml',
    );
    const run = await pantaAsync(['run', spec, '--out', out]);
    expect(run.stderr).not.toMatch(/error|fail/i);
    expect(run.code).toBe(0);
    const verified = await pantaAsync(['verify', out]);
    expect(verified.stdout + verified.stderr).toContain('complete and consistent');
    expect(verified.code).toBe(0);
    expectNoUsableTags((await expectSoundCorpus(out)).order);
  });

  it('the LLM judge too: never-matching and identical answers graded by a model that cannot grade', async () => {
    expectNoUsableTags((await expectSoundCorpus(await sweep('never-matching', 'unparsable-verdict'))).order);
    const { order } = await expectSoundCorpus(await sweep('identical', 'unparsable-verdict'));
    expectUnanimous(order);
    expectNoUsableTags(order);
  });
});
