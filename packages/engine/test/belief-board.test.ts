import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { objectKey, parseBoardLines, parseDataset, parseSweepSpec, planSweep, type TeamBoardRow } from '@panta/core';
import { checkTeamShard, queryRows, verifyCorpus } from '@panta/corpus';
import { startSurrogateServer } from '@panta/llm';
import { ROOT, corpusDiff, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

/**
 * examples/belief-board.yaml made small: absolute paths, the lines given replaced. The surrogate plays its
 * team-facts scenario by name: the neutral agent writes no board lines, and these tests read the board.
 */
function example(replace: Record<string, string>, populations = true): string {
  let text = readFileSync(join(ROOT, 'examples', 'belief-board.yaml'), 'utf8')
    .replace('backend: {kind: surrogate}', `backend: {${SURROGATE}}`)
    .replaceAll('../datasets/', `${ROOT}/datasets/`)
    .replaceAll('file: team-beliefs.jsonl', `file: ${ROOT}/examples/team-beliefs.jsonl`)
    .replace(/^out: .*$/m, '');
  // Without the population arms (none only): the population axis is exercised on claims.
  if (!populations) text = text.replace(/^population:\n(?: {2}- .*\n)+/m, '');
  for (const [from, to] of Object.entries(replace)) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  return text;
}

const SURROGATE = 'kind: surrogate, scenario: team-facts';

const SMALL = { 'trials: 4': 'trials: 1\nprompts: [cl01, cl02]' };

/** Five-fact questions through a relay of 5 and a hub of 3, with a board small enough to drop old objects. */
const MULTIFACT = {
  ...SMALL,
  'trials: 1\nprompts: [cl01, cl02]': 'trials: 2\nprompts: [mf01, mf02, mf05]',
  'claims24.jsonl': 'multifact26.jsonl',
  'sizes: [3]': 'sizes: [3, 5]',
  'team: {board_tokens: 256}': 'team: {board_tokens: 24, revisions: object}',
};

interface BoardRowOut {
  run_id: string;
  event: number;
  protocol: string;
  dynamics: string;
  response: string;
  board: string | null;
}

async function boardRows(out: string): Promise<BoardRowOut[]> {
  const rows = await queryRows(
    `SELECT e.run_id, e.event::INTEGER AS event, r.protocol, r.dynamics, e.response, e.board
     FROM read_parquet('${out}/events/*.parquet') e JOIN read_parquet('${out}/runs.parquet') r USING (run_id) ORDER BY e.run_id, e.event`,
  );
  return rows as unknown as BoardRowOut[];
}

/**
 * The MULTIFACT sweep (no population arms), run once for the file: the tests that only read it (the boards its
 * rows hold, verify's refusals of tampered copies of a shard) share it. Its folder, and the spec's path.
 */
let multifact: Promise<{ dir: string; spec: string; out: string }> | undefined;
function multifactCorpus(): Promise<{ dir: string; spec: string; out: string }> {
  multifact ??= (async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, example(MULTIFACT, false), 'multifact.yaml');
    const out = join(dir, 'out');
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    return { dir, spec, out };
  })();
  return multifact;
}

describe('the belief board as published, on relay and hub (paper 001; docs/teams.md)', () => {
  it('examples/belief-board.yaml: every arm runs on relay and hub, verifies, and is the same corpus at concurrency 1 and 64', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, example(SMALL), 'board.yaml');
    const [one, many] = [join(dir, 'one'), join(dir, 'many')];
    expect((await runSweep(spec, { out: one, concurrency: 1, logLevel: 'silent' })).status).toBe('complete');
    expect((await runSweep(spec, { out: many, concurrency: 64, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(one)).problems).toEqual([]);
    expect((await verifyCorpus(many)).problems).toEqual([]);
    expect(await corpusDiff(one, many)).toEqual({ extra: 0, missing: 0 });
    // 2 prompts x 1 trial x 3 population arms per (dynamics, protocol): relay 3 calls a run, hub 5; with an
    // observer or extractor after each hand-off (table, extract) relay 5, hub 9; down below.
    const arms = await queryRows(
      `SELECT dynamics, protocol, count(*)::INTEGER AS runs, sum(events)::INTEGER AS events FROM read_parquet('${one}/runs.parquet')
       WHERE status = 'complete' GROUP BY ALL ORDER BY dynamics, protocol`,
    );
    const expected = ['board', 'board_inert', 'down', 'extract', 'full', 'glauber', 'sop', 'table'].flatMap((protocol) => [
      { dynamics: 'hub', protocol },
    ]);
    expect(arms.filter((a) => a.dynamics === 'hub').map((a) => ({ dynamics: a.dynamics, protocol: a.protocol }))).toEqual(expected);
    for (const a of arms) {
      const observed = a.protocol === 'table' || a.protocol === 'extract';
      expect(a.runs).toBe(6);
      // down: the debates members may call, planned (made or skipped): relay 3 + 2 x 2, hub 5 + 3 x 2.
      const debates = a.protocol === 'down' ? (a.dynamics === 'relay' ? 4 : 6) : 0;
      expect(a.events).toBe(6 * ((a.dynamics === 'relay' ? (observed ? 5 : 3) : observed ? 9 : 5) + debates));
    }
    const rows = await boardRows(one);
    for (const r of rows) {
      if (r.protocol === 'board' || r.protocol === 'board_inert' || r.protocol === 'table') expect(r.board).not.toBeNull();
      else expect(r.board).toBeNull();
      if (r.board !== null && r.protocol === 'board_inert') expect((JSON.parse(r.board) as TeamBoardRow).shown).toEqual([]);
    }
    // sop hand-offs and reports are in the verdict / evidence / next-steps form; full relays read every earlier call.
    const sop = rows.filter((r) => r.protocol === 'sop' && !r.response.startsWith('Answer:') && !/^\d\./.test(r.response));
    expect(sop.length).toBeGreaterThan(0);
    for (const r of sop) expect(r.response).toMatch(/^Verdict: .*\. Evidence: .*\. Next steps: /);
    const [full] = await queryRows(
      `SELECT read_versions::INTEGER[] AS reads FROM read_parquet('${one}/events/*.parquet') WHERE run_id LIKE '%-full-relay-%' AND event = 2 LIMIT 1`,
    );
    expect(full!.reads).toEqual([0, 1]);
    // The report's team tables compare the new arms beside the plain team, on both schedules.
    expect(panta(['report', one]).code).toBe(0);
    const answers = readFileSync(join(one, 'report', 'tables', 'team-answers.csv'), 'utf8');
    for (const team of ['relay', 'hub'])
      for (const arm of ['none', 'board', 'board_inert', 'full', 'sop', 'table', 'extract', 'down'])
        expect(answers).toContain(`\n${team},${arm},`);
  }, 240_000);

  it("a board run's rows hold the whole board: every revision points back to an earlier entry on the same object, nothing is deleted, the cap drops the oldest", async () => {
    const { out } = await multifactCorpus();
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const rows = (await boardRows(out)).filter((r) => r.protocol === 'board' || r.protocol === 'board_inert');
    const revisions = { relay: 0, hub: 0 } as Record<string, number>;
    let dropped = 0;
    let lines = 0;
    let entries = 0;
    const byRun = new Map<string, Map<string, { event: number; object: string }>>();
    for (const r of rows) {
      const board = JSON.parse(r.board!) as TeamBoardRow;
      const seen = byRun.get(r.run_id) ?? new Map<string, { event: number; object: string }>();
      byRun.set(r.run_id, seen);
      // Every entry a reply states is on the board: as many entries as well-formed BELIEF lines.
      const parsed = parseBoardLines(r.response);
      lines += parsed.lines.length;
      entries += board.entries.length;
      expect(board.entries.map((e) => e.claim)).toEqual(parsed.lines.map((l) => l.claim));
      for (const e of board.entries) {
        expect(e.id.startsWith(`e${r.event}.`)).toBe(true);
        if (e.revises !== null) {
          revisions[r.dynamics]!++;
          const old = seen.get(e.revises);
          expect(old, `${r.run_id} ${e.id} revises ${e.revises}`).toBeDefined();
          expect(old!.event).toBeLessThan(r.event);
          expect(objectKey(old!.object)).toBe(objectKey(e.object));
        }
      }
      // What a call was shown is on the board written before it (nothing shown that a later call removed).
      for (const id of board.shown) expect(seen.has(id)).toBe(true);
      for (const e of board.entries) seen.set(e.id, { event: r.event, object: e.object });
      dropped += board.dropped;
    }
    expect(lines).toBe(entries);
    expect(entries).toBeGreaterThan(0);
    // Relay members revise a part they now believe otherwise; hub workers revise the orchestrator's "open" entries.
    expect(revisions.relay).toBeGreaterThan(0);
    expect(revisions.hub).toBeGreaterThan(0);
    // 24 tokens hold one or two five-fact lines: later relay members see only the newest objects.
    expect(dropped).toBeGreaterThan(0);
  });

  it('panta verify fails a board whose revision, entries or rendering are not what the replies give', async () => {
    const { spec, out } = await multifactCorpus();
    const dir = tempDir();
    const parsed = parseSweepSpec(readFileSync(spec, 'utf8'), spec);
    const prompts = parseDataset(readFileSync(join(ROOT, 'datasets', 'multifact26.jsonl'), 'utf8'), 'multifact26.jsonl');
    const run = planSweep(
      parsed,
      prompts.filter((p) => p.id === 'mf01'),
      spec,
    ).find((r) => r.protocol === 'board' && r.dynamics === 'relay' && r.n === 5)!;
    const shard = join(out, 'events', `${run.runId}.parquet`);
    expect(await checkTeamShard(shard, run)).toBeNull();
    const tampered = async (replace: string): Promise<string | null> => {
      const file = join(dir, `t${Math.random().toString(36).slice(2)}.parquet`);
      await queryRows(`COPY (SELECT * REPLACE (${replace}) FROM read_parquet('${shard}') ORDER BY event) TO '${file}' (FORMAT parquet)`);
      return checkTeamShard(file, run);
    };
    // A revision pointing at nothing, an entry dropped from a row, a rendering that is not the rule's.
    expect(await tampered(`CASE WHEN event = 1 THEN replace(board, '"revises":null', '"revises":"e9.0"') ELSE board END AS board`)).toMatch(
      /event 1 .*(revises e9\.0, which is no earlier entry|is not what its reply)/,
    );
    expect(await tampered(`CASE WHEN event = 0 THEN replace(board, '"id":"e0.0"', '"id":"e0.7"') ELSE board END AS board`)).toMatch(
      /event 0 .*entry 0 has id e0\.7/,
    );
    expect(await tampered(`CASE WHEN event = 4 THEN replace(board, '"shown":["', '"shown":["e0.0","') ELSE board END AS board`)).toMatch(
      /event 4 .*is not what its reply and the board it read give/,
    );
    // A reply's board line removed: the row's entries are no longer what the reply says.
    expect(
      await tampered(`CASE WHEN event = 0 THEN regexp_replace(response, '\\nBELIEF:[^\\n]*', '') ELSE response END AS response`),
    ).toMatch(/event 0 .*is not what its reply/);
  });

  it('the served surrogate, through the real openai client, writes the same boards as the in-process one', async () => {
    const dir = tempDir();
    const prompts = ['multifact26', 'claims24'].flatMap((d) => parseDataset(readFileSync(join(ROOT, 'datasets', `${d}.jsonl`), 'utf8'), d));
    const server = await startSurrogateServer({ prompts, surrogate: { scenario: 'team-facts' } });
    try {
      // Its first trial: each run is its own (seeded by its id), so the in-process sweep's rows of those runs.
      const text = example(MULTIFACT, false).replace('trials: 2', 'trials: 1');
      const served = writeSpec(
        dir,
        text.replace(
          `backend: {${SURROGATE}}`,
          `backend: {kind: openai, base_url: "${server.url}/v1", model: surrogate-potts-v1, max_in_flight: 16}`,
        ),
        'served.yaml',
      );
      const b = join(dir, 'served');
      expect((await runSweep(served, { out: b, logLevel: 'silent' })).status).toBe('complete');
      const [x, y] = [(await boardRows((await multifactCorpus()).out)).filter((r) => r.run_id.endsWith('-t0')), await boardRows(b)];
      expect(x.length).toBeGreaterThan(0);
      expect(y.map((r) => [r.run_id, r.response, r.board])).toEqual(x.map((r) => [r.run_id, r.response, r.board]));
    } finally {
      await server.close();
    }
  });

  it('a board sweep killed with SIGKILL mid-run resumes to the corpus of an uninterrupted run', async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      example(
        {
          ...MULTIFACT,
          'protocol: [glauber, board, board_inert, full, sop, table, extract, down]': 'protocol: [board, board_inert]\nconcurrency: 4',
          [`backend: {${SURROGATE}}`]: `backend: {${SURROGATE}, latency_ms: 3}`,
        },
        false,
      ),
      'board.yaml',
    );
    const killed = join(dir, 'killed');
    const child = spawn(process.execPath, [join(ROOT, 'test', 'fixtures', 'run-sweep.mjs'), spec, killed, '7'], {
      cwd: ROOT,
      stdio: 'ignore',
    });
    const parts = () => {
      const root = join(killed, 'events', '.parts');
      return existsSync(root)
        ? readdirSync(root).reduce((s, d) => s + readdirSync(join(root, d)).filter((f) => f.endsWith('.parquet')).length, 0)
        : 0;
    };
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && parts() < 3) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(parts()).toBeGreaterThanOrEqual(3);
    expect(panta(['run', spec, '--out', killed]).code).toBe(0);
    expect((await verifyCorpus(killed)).problems).toEqual([]);
    const straight = join(dir, 'straight');
    expect((await runSweep(spec, { out: straight, logLevel: 'silent' })).status).toBe('complete');
    expect(await corpusDiff(killed, straight)).toEqual({ extra: 0, missing: 0 });
  });
});
