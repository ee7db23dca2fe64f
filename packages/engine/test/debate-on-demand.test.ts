import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callsDebate, parseDataset, parseSweepSpec, planSweep } from '@panta/core';
import { checkTeamShard, queryRows, verifyCorpus } from '@panta/corpus';
import { ROOT, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

/**
 * examples/belief-board.yaml made small: two-fact questions (where a member may lack a part and call a
 * debate on it) through a relay of 3 and a hub of 3, the plain team beside debate on demand, one trial.
 */
function example(): string {
  const text = readFileSync(join(ROOT, 'examples', 'belief-board.yaml'), 'utf8');
  const out = text
    .replace('backend: {kind: surrogate}', 'backend: {kind: surrogate, scenario: team-facts}')
    .replaceAll('../datasets/claims24.jsonl', `${ROOT}/datasets/multifact26.jsonl`)
    .replace(/^population:\n(?: {2}- .*\n)+/m, '')
    .replace(/^out: .*$/m, '')
    .replace('trials: 4', 'trials: 1\nprompts: [mf01, mf02, mf05]')
    .replace('protocol: [glauber, board, board_inert, full, sop, table, extract, down]', 'protocol: [glauber, down]')
    .replace('team: {board_tokens: 256}\n', '');
  expect(out).toContain('protocol: [glauber, down]');
  return out;
}

interface Row {
  run_id: string;
  event: number;
  role: string;
  agent: number;
  protocol: string;
  dynamics: string;
  reads: number[];
  response: string;
  status: string;
}

describe('down (debate on demand), run end to end (paper 001; docs/teams.md)', () => {
  it('runs and verifies; debates are made exactly when called; plan, rows, the team tables and arm tests count them; verify fails a skip the replies do not give', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, example(), 'down.yaml');
    const out = join(dir, 'out');
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const rows = (await queryRows(
      `SELECT e.run_id, e.event::INTEGER AS event, e.role, e.agent::INTEGER AS agent, r.protocol, r.dynamics,
         e.read_versions::INTEGER[] AS reads, e.response, e.reply_status AS status
       FROM read_parquet('${out}/events/*.parquet') e JOIN read_parquet('${out}/runs.parquet') r USING (run_id) ORDER BY e.run_id, e.event`,
    )) as unknown as Row[];
    const perRun = new Map<string, Row[]>();
    for (const r of rows) perRun.set(r.run_id, [...(perRun.get(r.run_id) ?? []), r]);

    // 3 prompts x 1 trial per (dynamics, arm): debaters planned relay 2 x 2, hub 3 x 2; none in the plain team.
    const planned = (dynamics: string) => rows.filter((r) => r.role === 'debater' && r.dynamics === dynamics).length;
    expect(planned('relay')).toBe(3 * 4);
    expect(planned('hub')).toBe(3 * 6);
    expect(rows.filter((r) => r.protocol === 'glauber' && r.role === 'debater')).toEqual([]);
    // Each debater is made exactly when the reply it reads (its first read) calls a debate, and argues as another member.
    let made = 0;
    let skipped = 0;
    for (const r of rows) {
      if (r.role !== 'debater') continue;
      const caller = perRun.get(r.run_id)![r.reads[0]!]!;
      expect(['relay', 'worker']).toContain(caller.role);
      expect(r.agent).not.toBe(caller.agent);
      if (callsDebate(caller.response)) {
        expect(r.status).not.toBe('skipped');
        expect(r.response).toMatch(/^part \d+: /);
        made++;
      } else {
        expect(r).toMatchObject({ status: 'skipped', response: '' });
        skipped++;
      }
    }
    expect(made).toBeGreaterThan(0);
    expect(skipped).toBeGreaterThan(0);

    // teams.parquet counts the calls made: the skipped debaters are not.
    const teams = await queryRows(`SELECT run_id, calls::INTEGER AS calls FROM read_parquet('${out}/teams.parquet')`);
    for (const t of teams) expect(t.calls).toBe(perRun.get(String(t.run_id))!.filter((r) => r.status !== 'skipped').length);

    // panta plan counts every planned debater, as calls made at most.
    const plan = panta(['plan', spec]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(new RegExp(`\\ndebater \\(at most\\) +${planned('relay') + planned('hub')} `));

    // The report's team tables and arm tests carry the arm on both schedules.
    expect(panta(['report', out]).code).toBe(0);
    const answers = readFileSync(join(out, 'report', 'tables', 'team-answers.csv'), 'utf8');
    const tests = readFileSync(join(out, 'report', 'tables', 'team-arm-tests.csv'), 'utf8');
    for (const team of ['relay', 'hub']) {
      expect(answers).toContain(`\n${team},down,`);
      expect(tests).toMatch(new RegExp(`\\n${team},none,3,fact recall,down,none,1,1,`));
    }

    // panta verify recomputes each skip from the replies: a motion taken out of a caller's reply fails.
    const parsed = parseSweepSpec(readFileSync(spec, 'utf8'), spec);
    const prompts = parseDataset(readFileSync(join(ROOT, 'datasets', 'multifact26.jsonl'), 'utf8'), 'multifact26.jsonl');
    const called = rows.find((r) => r.role === 'relay' && r.protocol === 'down' && callsDebate(r.response))!;
    const run = planSweep(parsed, prompts, spec).find((p) => p.runId === called.run_id)!;
    const shard = join(out, 'events', `${run.runId}.parquet`);
    expect(await checkTeamShard(shard, run)).toBeNull();
    const file = join(dir, 'tampered.parquet');
    await queryRows(
      `COPY (SELECT * REPLACE (CASE WHEN event = ${called.event} THEN regexp_replace(response, '\\nDEBATE:[^\\n]*', '') ELSE response END AS response) FROM read_parquet('${shard}') ORDER BY event) TO '${file}' (FORMAT parquet)`,
    );
    expect(await checkTeamShard(file, run)).toMatch(
      new RegExp(`\\(debater, step \\d+\\) is made, but the reply of event ${called.event} calls no debate`),
    );
  }, 120_000);
});
