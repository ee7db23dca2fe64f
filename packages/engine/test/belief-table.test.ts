import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDataset, parseLedgerLines, parseSweepSpec, planSweep, TABLE_HEADER, type TeamBoardRow } from '@panta/core';
import { checkTeamShard, queryRows, verifyCorpus } from '@panta/corpus';
import { ROOT, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

/**
 * examples/belief-board.yaml made small: five-fact questions through a relay of 3 and a hub of 3, the plain
 * team beside the observer's belief table and the extract baseline, a table cap small enough to drop objects.
 */
function example(): string {
  const text = readFileSync(join(ROOT, 'examples', 'belief-board.yaml'), 'utf8');
  const out = text
    .replace('backend: {kind: surrogate}', 'backend: {kind: surrogate, scenario: team-facts}')
    .replaceAll('../datasets/claims24.jsonl', `${ROOT}/datasets/multifact26.jsonl`)
    .replace(/^population:\n(?: {2}- .*\n)+/m, '')
    .replace(/^out: .*$/m, '')
    .replace('trials: 4', 'trials: 2\nprompts: [mf01, mf02]')
    .replace('protocol: [glauber, board, board_inert, full, sop, table, extract, down]', 'protocol: [glauber, table, extract]')
    .replace('team: {board_tokens: 256}', 'team: {board_tokens: 40}');
  expect(out).toContain('protocol: [glauber, table, extract]');
  return out;
}

interface Row {
  run_id: string;
  event: number;
  role: string;
  agent: number;
  protocol: string;
  dynamics: string;
  temperature: number;
  reads: number[];
  response: string;
  board: string | null;
}

async function rowsOf(out: string): Promise<Row[]> {
  return (await queryRows(
    `SELECT e.run_id, e.event::INTEGER AS event, e.role, e.agent::INTEGER AS agent, r.protocol, r.dynamics,
       e.sampling_temperature::DOUBLE AS temperature, e.read_versions::INTEGER[] AS reads, e.response, e.board
     FROM read_parquet('${out}/events/*.parquet') e JOIN read_parquet('${out}/runs.parquet') r USING (run_id) ORDER BY e.run_id, e.event`,
  )) as unknown as Row[];
}

describe("the observer's belief table and the extract baseline, run end to end (paper 001; docs/teams.md)", () => {
  it('runs, verifies, counts the observer calls in the plan, the rows and the team tables, and panta verify fails a table that is not the replies', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, example(), 'table.yaml');
    const out = join(dir, 'out');
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const rows = await rowsOf(out);

    // An observer (table) or extractor (extract) after each hand-off: relay 3 + 2 calls, hub 1 + 1 + 3 + 3 + 1.
    const perRun = new Map<string, Row[]>();
    for (const r of rows) perRun.set(r.run_id, [...(perRun.get(r.run_id) ?? []), r]);
    const count = (protocol: string, role: string) => rows.filter((r) => r.protocol === protocol && r.role === role).length;
    // 2 prompts x 2 trials = 4 runs per (dynamics, protocol).
    expect(count('table', 'observer')).toBe(4 * 2 + 4 * 4);
    expect(count('extract', 'extractor')).toBe(4 * 2 + 4 * 4);
    expect(count('glauber', 'observer') + count('glauber', 'extractor') + count('table', 'extractor')).toBe(0);
    for (const r of rows) {
      if (r.role !== 'observer' && r.role !== 'extractor') continue;
      // It reads the member it is about (its last read), at temperature 0.
      const member = perRun.get(r.run_id)![r.reads.at(-1)!]!;
      expect(member.agent).toBe(r.agent);
      expect(['relay', 'orchestrator', 'worker']).toContain(member.role);
      expect(r.temperature).toBe(0);
    }

    // The table: entries only on observer rows, typed, about the member observed, revising earlier entries.
    let entries = 0;
    let revisions = 0;
    let dropped = 0;
    for (const [, run] of perRun) {
      if (run[0]!.protocol !== 'table') {
        for (const r of run) expect(r.board).toBeNull();
        continue;
      }
      const seen = new Set<string>();
      for (const r of run) {
        const board = JSON.parse(r.board!) as TeamBoardRow;
        for (const id of board.shown) expect(seen.has(id)).toBe(true);
        dropped += board.dropped;
        if (r.role !== 'observer') {
          expect(board.entries).toEqual([]);
          continue;
        }
        const lines = parseLedgerLines(r.response).lines;
        expect(board.entries.map((e) => [e.type, e.object, e.claim, e.author])).toEqual(
          lines.map((l) => [l.type, l.object, l.claim, r.agent]),
        );
        for (const e of board.entries) {
          if (e.revises !== null) {
            expect(seen.has(e.revises)).toBe(true);
            revisions++;
          }
          seen.add(e.id);
          entries++;
        }
      }
    }
    expect(entries).toBeGreaterThan(0);
    expect(revisions).toBeGreaterThan(0);
    expect(dropped).toBeGreaterThan(0);
    expect(rows.filter((r) => r.role === 'observer' && r.response.includes('BELIEF: answer ready')).length).toBeGreaterThan(0);

    // teams.parquet counts every call the run made, the observer's included.
    const teams = await queryRows(`SELECT run_id, calls::INTEGER AS calls FROM read_parquet('${out}/teams.parquet')`);
    for (const t of teams) expect(t.calls).toBe(perRun.get(String(t.run_id))!.length);

    // panta plan counts them as their own kinds, as many as the corpus holds.
    const plan = panta(['plan', spec]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(new RegExp(`\\nobserver +${count('table', 'observer')} `));
    expect(plan.stdout).toMatch(new RegExp(`\\nextractor +${count('extract', 'extractor')} `));

    // The report's team tables and arm tests carry both arms on both schedules.
    expect(panta(['report', out]).code).toBe(0);
    const answers = readFileSync(join(out, 'report', 'tables', 'team-answers.csv'), 'utf8');
    const tests = readFileSync(join(out, 'report', 'tables', 'team-arm-tests.csv'), 'utf8');
    // The calls table: the observer's and extractor's calls are the arm's cost over the plain team.
    const cost = readFileSync(join(out, 'report', 'tables', 'team-cost.csv'), 'utf8');
    for (const [team, plain, observed] of [
      ['relay', 3, 5],
      ['hub', 5, 9],
    ] as const) {
      expect(cost).toMatch(new RegExp(`\\n${team},none,none,4,${plain},`));
      for (const arm of ['table', 'extract']) expect(cost).toMatch(new RegExp(`\\n${team},${arm},none,4,${observed},`));
    }
    for (const team of ['relay', 'hub'])
      for (const arm of ['table', 'extract']) {
        expect(answers).toContain(`\n${team},${arm},`);
        expect(tests).toMatch(new RegExp(`\\n${team},none,3,fact recall,${arm},none,2,2,`));
      }

    // The ledger table: per run, the entries the observer wrote (split by type) and its revisions, as counted above.
    const ledger = readFileSync(join(out, 'report', 'tables', 'team-ledger.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(ledger[0]).toBe('team,arm,population,runs,entries,observations,beliefs,revisions,malformed lines,calls with objects dropped');
    expect(ledger.slice(1).map((l) => l.split(',').slice(0, 4).join(','))).toEqual(['hub,table,none,4', 'relay,table,none,4']);
    const column = (i: number) => ledger.slice(1).reduce((sum, l) => sum + 4 * Number(l.split(',')[i]), 0);
    expect(column(4)).toBeCloseTo(entries, 9);
    expect(column(5) + column(6)).toBeCloseTo(entries, 9);
    expect(column(7)).toBeCloseTo(revisions, 9);

    // panta verify recomputes the table from the replies: a changed type, a lost line or an entry on a member's row fails.
    const parsed = parseSweepSpec(readFileSync(spec, 'utf8'), spec);
    const prompts = parseDataset(readFileSync(join(ROOT, 'datasets', 'multifact26.jsonl'), 'utf8'), 'multifact26.jsonl');
    const run = planSweep(
      parsed,
      prompts.filter((p) => p.id === 'mf01'),
      spec,
    ).find((r) => r.protocol === 'table' && r.dynamics === 'relay')!;
    const shard = join(out, 'events', `${run.runId}.parquet`);
    expect(await checkTeamShard(shard, run)).toBeNull();
    const first = rows.find((r) => r.run_id === run.runId && r.event === 1)!;
    expect(JSON.parse(first.board!).entries.length).toBeGreaterThan(0);
    const tampered = async (replace: string): Promise<string | null> => {
      const file = join(dir, `t${Math.random().toString(36).slice(2)}.parquet`);
      await queryRows(`COPY (SELECT * REPLACE (${replace}) FROM read_parquet('${shard}') ORDER BY event) TO '${file}' (FORMAT parquet)`);
      return checkTeamShard(file, run);
    };
    expect(
      await tampered(`CASE WHEN event = 1 THEN replace(board, '"type":"observation"', '"type":"rumour"') ELSE board END AS board`),
    ).toMatch(/event 1 \(observer\).*type "rumour", not observation or belief/);
    expect(
      await tampered(`CASE WHEN event = 1 THEN regexp_replace(response, 'OBSERVATION:[^\\n]*\\n?', '') ELSE response END AS response`),
    ).toMatch(/event 1 \(observer\).*is not what its reply/);
    expect(
      await tampered(
        `CASE WHEN event = 0 THEN '{"entries":[{"id":"e0.0","step":0,"author":0,"object":"x","claim":"y","confidence":1,"revises":null,"type":"belief"}],"malformed":0,"shown":[],"dropped":0}' ELSE board END AS board`,
      ),
    ).toMatch(/event 0 \(relay\).*only the observer's calls write/);
    // The members after the first are shown the table, the observer's header and typed lines.
    expect(TABLE_HEADER).toMatch(/^Belief table/);
  }, 120_000);
});
