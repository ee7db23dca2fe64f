import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { parseDataset } from '@panta/core';
import { eventsDir, queryRows, runsTablePath, teamsTablePath, verifyCorpus } from '@panta/corpus';
import { writeReport } from '@panta/report';
// The teams study's report section (as `panta report` loads it).
import '@panta/studies/report';
import { describe, expect, it } from 'vitest';
import { ROOT, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

const DATASETS = join(ROOT, 'datasets');
const rowsOf = (file: string, sql: string) => queryRows(sql.replaceAll('{T}', `read_parquet('${file}')`));
const prompt = (set: string, id: string) => parseDataset(readFileSync(join(DATASETS, set), 'utf8'), set).find((p) => p.id === id)!;

/** Whole-word, case-insensitive presence: the test's own reading of a fact, not core's normaliser. */
const has = (text: string, phrase: string) =>
  new RegExp(`(^|[^\\p{L}\\p{N}])${phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}\\p{N}])`, 'iu').test(text);

describe('teams.parquet on surrogate team sweeps', () => {
  it('relay: each run scores its last hop against the gold facts; verify and the report accept the corpus', async () => {
    const dir = tempDir();
    const out = join(dir, 'relay');
    const spec = `name: relay-metrics\ndataset: ${DATASETS}/multifact26.jsonl\nprompts: [mf01, mf11]\ngeometries: [chain]\nsizes: [2, 4]\ntemperatures: [0.7]\ntrials: 2\nsweeps: 1\nseed: 5\ndynamics: relay\nteam: {token_budget: 400}\n`;
    expect((await runSweep(writeSpec(dir, spec), { out, concurrency: 8, logLevel: 'silent' })).status).toBe('complete');
    const team = await rowsOf(teamsTablePath(out), 'SELECT * FROM {T} ORDER BY run_id');
    const last = await rowsOf(
      join(eventsDir(out), '*.parquet'),
      "SELECT run_id, prompt_id, arg_max(response, event) AS answer, count(*) AS calls FROM {T} WHERE role = 'relay' GROUP BY ALL ORDER BY run_id",
    );
    expect(team).toHaveLength(8);
    // Not a vacuous check: the surrogate's relays lose some facts and keep others.
    expect(team.some((r) => Number(r.fact_recall) > 0 && Number(r.fact_recall) < 1)).toBe(true);
    expect(team.map((r) => r.run_id)).toEqual(last.map((r) => r.run_id));
    team.forEach((r, i) => {
      const gold = prompt('multifact26.jsonl', String(last[i].prompt_id)).facts!;
      const found = gold.filter((f) => has(String(last[i].answer), f)).length;
      expect(r.answer).toBe(last[i].answer);
      expect(r.fact_recall, String(r.run_id)).toBeCloseTo(found / gold.length, 12);
      expect(r.exact_match).toBe(found === gold.length ? 1 : 0);
      expect(Number(r.calls)).toBe(Number(last[i].calls));
      expect([r.turn, r.focus, r.judge_verdict]).toEqual([1, null, null]);
    });
    expect(panta(['verify', out]).code).toBe(0);
    const report = await writeReport(out);
    expect(report.figures.map((f) => f.id)).toContain('team-lost-in-propagation');
    // verify recomputes the table: one fact recall changed is named (beside the checksum the change breaks).
    const first = String(team[0].run_id);
    await queryRows(
      `COPY (SELECT * REPLACE (CASE WHEN run_id = '${first}' THEN fact_recall + 0.25 ELSE fact_recall END AS fact_recall) FROM read_parquet('${teamsTablePath(out)}')) TO '${teamsTablePath(out)}.x' (FORMAT parquet)`,
    );
    renameSync(`${teamsTablePath(out)}.x`, teamsTablePath(out));
    const v = await verifyCorpus(out);
    expect(v.ok).toBe(false);
    expect(v.problems).toContain(
      `teams.parquet: ${first} turn 1: fact_recall ${Number(team[0].fact_recall) + 0.25} stored, ${Number(team[0].fact_recall)} recomputed`,
    );
    expect(report.tables.map((t) => t.id)).toEqual(expect.arrayContaining(['team-answers', 'team-cost']));
  }, 180_000);

  it('debate: every turn scores its effective solution, FOCUS is the difference of scores, runs.parquet carries the drift', async () => {
    const dir = tempDir();
    const out = join(dir, 'debate');
    const spec = `name: debate-metrics\ndataset: ${DATASETS}/mmlu-pro28.jsonl\nprompts: [mp2804]\ngeometries: [meanfield]\nsizes: [3]\ntemperatures: [1.0]\ntrials: 3\nsweeps: 5\nseed: 5\ndynamics: debate\nprotocol: [glauber, drift-policy, regenerate]\n`;
    expect((await runSweep(writeSpec(dir, spec), { out, concurrency: 8, logLevel: 'silent' })).status).toBe('complete');
    const { accepted, choices } = prompt('mmlu-pro28.jsonl', 'mp2804');
    const named = (text: string) => choices!.filter((c) => has(text, c));
    const solutions = await rowsOf(
      join(eventsDir(out), '*.parquet'),
      "SELECT run_id, sweep, arg_max(response, event) AS answer FROM {T} WHERE role = 'solution' AND reply_status <> 'skipped' GROUP BY ALL ORDER BY run_id, sweep",
    );
    const team = await rowsOf(teamsTablePath(out), 'SELECT * FROM {T} ORDER BY run_id, turn');
    expect(team).toHaveLength(9 * 5);
    expect(new Set(team.map((r) => r.exact_match))).toEqual(new Set([0, 1]));
    team.forEach((r, i) => {
      expect([r.run_id, r.turn]).toEqual([solutions[i].run_id, solutions[i].sweep]);
      const answer = String(solutions[i].answer);
      // Right when the answer names the gold option and no other.
      const right = named(answer).length === 1 && named(answer)[0] === accepted[0];
      expect(r.exact_match, `${r.run_id} turn ${r.turn}: ${answer}`).toBe(right ? 1 : 0);
      if (r.turn === 1) expect(r.focus).toBeNull();
      else expect(r.focus).toBe(Number(r.exact_match) - Number(team[i - 1].exact_match));
    });
    const runs = await rowsOf(
      runsTablePath(out),
      'SELECT run_id, focus, focus_total, drift_onset, recovered, sweeps_run FROM {T} ORDER BY run_id',
    );
    for (const run of runs) {
      const turns = team.filter((r) => r.run_id === run.run_id);
      expect(run.focus).toEqual(turns.slice(1).map((t) => t.focus));
      expect(run.drift_onset).toBe(turns[0].drift_onset);
      expect(run.sweeps_run).toBe(5);
    }
    expect(panta(['verify', out]).code).toBe(0);
    const report = await writeReport(out);
    expect(report.figures.map((f) => f.id)).toEqual(expect.arrayContaining(['team-focus', 'team-drift']));
    expect(report.tables.map((t) => t.id)).toEqual(expect.arrayContaining(['team-drift-by-arm', 'team-driftjudge']));
  }, 180_000);
});
