import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDataset } from '@panta/core';
import { queryRows, verifyCorpus } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { panta, ROOT, tempDir, writeSpec } from './helpers.js';

/** examples/ssvp-sprint.yaml with absolute paths, cut to `trials` trials. */
function sprintExample(trials: number, extra: Record<string, string> = {}): string {
  let text = readFileSync(join(ROOT, 'examples', 'ssvp-sprint.yaml'), 'utf8')
    .replace('../datasets/', `${ROOT}/datasets/`)
    .replace('file: sprint-roles.jsonl', `file: ${ROOT}/examples/sprint-roles.jsonl`)
    .replace(/^out: .*$/m, '');
  for (const [from, to] of Object.entries({ 'trials: 10': `trials: ${trials}`, ...extra })) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  return text;
}

describe('examples/ssvp-sprint.yaml: the software-sprint replication (Hallucination as Context Drift 5.8, Table 4)', () => {
  it('scripts/build-sprint.mjs writes the committed datasets/sprint5.jsonl: PM, Dev and QA briefings, platform / scope / requirements assertions', () => {
    const out = join(tempDir(), 'sprint5.jsonl');
    const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-sprint.mjs'), out], { encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(join(ROOT, 'datasets', 'sprint5.jsonl'), 'utf8'));
    const prompts = parseDataset(readFileSync(out, 'utf8'), out);
    expect(prompts.length).toBe(5);
    for (const p of prompts) {
      expect(p.id).toMatch(/^sprint-/);
      expect(Object.keys(p.briefings ?? {}).sort()).toEqual(['dev', 'pm', 'qa']);
      expect(p.assertions?.map((a) => a.name)).toEqual(['platform', 'scope', 'requirements']);
      // The Developer's briefing names the wrong platform (web vs. mobile), the question the right one.
      expect(p.briefings?.dev).toContain(p.false_answers[0]);
      expect(p.question).toContain(p.accepted[0]);
    }
  });

  it('runs on the surrogate: HR per arm in travel.parquet, TCS undefined with the reason, the sprint rubric, Table 4 in the report; verifies', async () => {
    const dir = tempDir();
    const out = join(dir, 'sprint');
    const spec = writeSpec(
      dir,
      sprintExample(2, { 'judge: {kind: reference}': 'judge: {kind: llm, backend: {kind: surrogate}}' }),
      'sprint.yaml',
    );
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const rows = await queryRows(`SELECT * FROM read_parquet('${out}/travel.parquet') ORDER BY run_id`);
    // 2 trials per arm, the scenario drawn per trial (the same in every arm).
    expect(rows.length).toBe(6);
    for (const r of rows) {
      expect(String(r.prompt_id)).toMatch(/^sprint-/);
      expect(r.tcs).toBeNull();
      expect(r.tcs_note).toBe('the software-sprint replication is scored on HR only (the paper’s Table 4)');
      expect(Number(r.judge_failures)).toBe(0);
    }
    expect(rows.some((r) => r.hr !== null)).toBe(true);
    // The judge was sent the sprint rubric, never the travel TCS rubric.
    const cache = readFileSync(join(out, '.state', 'judge-cache.jsonl'), 'utf8');
    expect(cache).toContain('travel-assertions\\u0000sprint-');
    expect(cache).not.toContain('travel-tcs');
    const report = join(dir, 'report');
    const r = panta(['report', out, '--out', report]);
    expect(r.code, r.stderr).toBe(0);
    const t4 = readFileSync(join(report, 'tables', 'travel-domains.csv'), 'utf8');
    expect(t4).toMatch(/^software sprint,no-sync,2,/m);
    expect(t4).toMatch(/^software sprint,full-broadcast,2,/m);
    // The example's own departure (full-broadcast's trial count) is named in the captions.
    expect(readFileSync(join(report, 'index.html'), 'utf8')).toContain('10 trials of full-broadcast, not 5');
  }, 120_000);
});
