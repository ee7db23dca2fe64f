import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dynamicsArms, parseDataset, parseEncoderArg, parseJudgeBlock, parseSweepSpec, planSweep, resolveTeamSolution } from '@panta/core';
import { checkTeamShard, queryRows, verifyCorpus } from '@panta/corpus';
import { startSurrogateServer } from '@panta/llm';
import { ROOT, corpusDiff, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { embedCorpus, judgeCorpus, runSweep } from '../src/index.js';
import { parallelism } from '../src/run-order.js';

/** An example spec made small for a test: absolute paths, and the lines given replaced. */
function example(name: string, replace: Record<string, string>): string {
  let text = readFileSync(join(ROOT, 'examples', `${name}.yaml`), 'utf8')
    .replaceAll('../datasets/', `${ROOT}/datasets/`)
    .replaceAll('file: team-beliefs.jsonl', `file: ${ROOT}/examples/team-beliefs.jsonl`)
    .replace(/^out: .*$/m, '');
  for (const [from, to] of Object.entries(replace)) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  return text;
}

const SMALL: Record<string, Record<string, string>> = {
  'lost-in-propagation': { 'sizes: [1, 2, 3, 4, 5, 6, 7, 8]': 'sizes: [1, 2, 5]\nprompts: [mf01, mf02]', 'trials: 3': 'trials: 1' },
  'drift-debate': { 'sweeps: 7': 'sweeps: 4\nprompts: [mp2804, mp2808]', 'trials: 2': 'trials: 1' },
  'belief-injection': { 'trials: 4': 'trials: 1\nprompts: [cl01, cl02]' },
};

/** The surrogate with no task knowledge: engine tests assert what the engine does, whatever the replies say. */
const NEUTRAL = { 'backend: {kind: surrogate}': 'backend: {kind: surrogate, scenario: neutral}' };

/**
 * Each small example on the neutral surrogate, swept once for the file at concurrency 1: the spec's path and the
 * corpus. A test that reads it shares it; one that rewrites it (panta embed, judge) takes a copy.
 */
const swept = new Map<string, Promise<{ dir: string; spec: string; out: string }>>();
function smallCorpus(name: string): Promise<{ dir: string; spec: string; out: string }> {
  let corpus = swept.get(name);
  if (corpus === undefined) {
    corpus = (async () => {
      const dir = tempDir();
      const spec = writeSpec(dir, example(name, { ...SMALL[name], ...NEUTRAL }), `${name}.yaml`);
      const out = join(dir, 'one');
      expect((await runSweep(spec, { out, concurrency: 1, logLevel: 'silent' })).status).toBe('complete');
      return { dir, spec, out };
    })();
    swept.set(name, corpus);
  }
  return corpus;
}

describe('team schedules end to end on the surrogate (docs/teams.md)', () => {
  for (const name of Object.keys(SMALL)) {
    it(`${name}: runs, verifies (every read set), and is the same corpus at concurrency 1 and 64`, async () => {
      const { dir, spec, out: one } = await smallCorpus(name);
      const many = join(dir, 'many');
      expect((await runSweep(spec, { out: many, concurrency: 64, logLevel: 'silent' })).status).toBe('complete');
      for (const out of [one, many]) {
        const report = await verifyCorpus(out);
        expect(report.problems).toEqual([]);
        expect(report.ok).toBe(true);
      }
      expect(await corpusDiff(one, many)).toEqual({ extra: 0, missing: 0 });
      const [rows] = await queryRows(
        `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE role = 'agent')::INTEGER AS agents FROM read_parquet('${one}/events/*.parquet')`,
      );
      expect(rows!.n).toBeGreaterThan(0);
      expect(rows!.agents).toBe(0);
    });
  }

  it('hub: an orchestrator, N workers each shown its own subtask only, an aggregation; verifies and is the same at concurrency 1 and 64', async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      example('lost-in-propagation', {
        'dynamics: relay': 'dynamics: hub',
        'team: {token_budget: 480}\n': '',
        'sizes: [1, 2, 3, 4, 5, 6, 7, 8]': 'sizes: [1, 2, 6]\nprompts: [mf01, mf02]',
        'trials: 3': 'trials: 2',
        // Workers that find only their own parts: what one was not shown it does not name.
        'backend: {kind: surrogate}': 'backend: {kind: surrogate, scenario: team-facts}',
      }),
      'hub.yaml',
    );
    const [one, many] = [join(dir, 'one'), join(dir, 'many')];
    expect((await runSweep(spec, { out: one, concurrency: 1, logLevel: 'silent' })).status).toBe('complete');
    expect((await runSweep(spec, { out: many, concurrency: 64, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(one)).problems).toEqual([]);
    expect(await corpusDiff(one, many)).toEqual({ extra: 0, missing: 0 });
    const file = `read_parquet('${one}/events/*.parquet')`;
    const roles = await queryRows(`SELECT role, count(*)::INTEGER AS n FROM ${file} GROUP BY role ORDER BY role`);
    // 2 prompts x 3 sizes x 2 trials: one orchestrator and one aggregator per run, N workers.
    expect(roles).toEqual([
      { role: 'aggregator', n: 12 },
      { role: 'orchestrator', n: 12 },
      { role: 'worker', n: 2 * 2 * (1 + 2 + 6) },
    ]);
    // Worker 1 of a hub of 6 on a five-fact question is given part 2 only, and reads the decomposition alone.
    const [w] = await queryRows(
      `SELECT read_versions::INTEGER[] AS reads, response FROM ${file} WHERE run_id = 'mf01-chain-n6-T0.7-glauber-hub-t0' AND role = 'worker' AND agent = 1`,
    );
    expect(w!.reads).toEqual([0]);
    expect(String(w!.response)).not.toContain('Beijing');
  });

  it("a debate whose personas come from a population file makes no persona-gen call, names each member's entry, and verifies", async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      example('drift-debate', {
        ...SMALL['drift-debate'],
        ...NEUTRAL,
        'dynamics: debate': `dynamics: debate\npopulation: {file: ${ROOT}/examples/team-beliefs.jsonl, assign: distinct}`,
      }),
      'personas.yaml',
    );
    const out = join(dir, 'out');
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const file = `read_parquet('${out}/events/*.parquet')`;
    const [c] = await queryRows(`SELECT count(*) FILTER (WHERE role = 'persona-gen')::INTEGER AS generated,
        count(DISTINCT persona) FILTER (WHERE role IN ('persona', 'vote'))::INTEGER AS personas,
        count(*) FILTER (WHERE role IN ('persona', 'vote') AND persona IS NULL)::INTEGER AS unnamed,
        count(*) FILTER (WHERE role IN ('drift-judge', 'feedback') AND persona IS NOT NULL)::INTEGER AS judges_named
      FROM ${file}`);
    expect(c).toEqual({ generated: 0, personas: 3, unnamed: 0, judges_named: 0 });
  });

  it("panta embed and panta judge cover every team row (each call is its event's row), and the corpus still verifies", async () => {
    const out = join(tempDir(), 'out');
    cpSync((await smallCorpus('lost-in-propagation')).out, out, { recursive: true });
    // As `panta embed OUT --encoder lex32:hashing:32` and `panta judge OUT --judge '{kind: reference}' --name ref2` do.
    expect((await embedCorpus(out, parseEncoderArg('lex32:hashing:32'))).status).toBe('complete');
    expect((await judgeCorpus(out, parseJudgeBlock('{kind: reference}', '--judge'), { name: 'ref2' })).status).toBe('complete');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const [c] =
      await queryRows(`SELECT count(*)::INTEGER AS n, count(emb_lex32)::INTEGER AS embedded, count(*) FILTER (WHERE tag_ref2 = tag)::INTEGER AS same
      FROM read_parquet('${out}/events/*.parquet')`);
    expect(c!.n).toBe(2 * (1 + 2 + 5));
    expect(c).toEqual({ n: c!.n, embedded: c!.n, same: c!.n });
  });

  it('a team run opens by its exact depth: a relay is one chain, a hub of 6 runs 8 calls in 3 steps', () => {
    const plan = (text: string) =>
      planSweep(
        parseSweepSpec(text, 't.yaml'),
        [{ id: 'p', question: 'Q?', accepted: ['a'], false_answers: [], false_premise: false }],
        't.yaml',
      );
    const base = 'name: t\ndataset: d.jsonl\ngeometries: [chain]\nsizes: [6]\ntemperatures: [0.7]\n';
    expect(parallelism(plan(`${base}dynamics: relay\n`)[0]!)).toBe(1);
    expect(parallelism(plan(`${base}dynamics: hub\n`)[0]!)).toBe(2);
  });

  it('the debate arms write what docs/teams.md says: judges from turn 2, feedback and regenerated turns only on drift, a solution per turn that its votes elect', async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      example('drift-debate', {
        'trials: 2': 'trials: 2\nprompts: [mp2804, mp2808, mp70, mp71, mp3526, mp3527]',
        ...NEUTRAL,
      }),
      'debate.yaml',
    );
    const out = join(dir, 'out');
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    const file = `read_parquet('${out}/events/*.parquet')`;
    const [c] = await queryRows(`SELECT
        count(*) FILTER (WHERE role = 'drift-judge')::INTEGER AS judges,
        count(DISTINCT run_id)::INTEGER AS runs,
        count(*) FILTER (WHERE role = 'drift-judge' AND sweep < 2)::INTEGER AS early,
        count(*) FILTER (WHERE role = 'feedback' AND protocol NOT IN ('drift-policy', 'drift-policy-gold'))::INTEGER AS stray_feedback,
        count(*) FILTER (WHERE role = 'feedback' AND reply_status <> 'skipped' AND protocol = 'drift-policy-gold')::INTEGER AS gold_feedback,
        count(*) FILTER (WHERE role = 'drift-judge' AND protocol = 'drift-policy-gold' AND prompt_tokens + completion_tokens > 0)::INTEGER AS gold_judge_calls,
        count(*) FILTER (WHERE role = 'feedback' AND reply_status <> 'skipped')::INTEGER AS feedback_made,
        count(*) FILTER (WHERE role = 'solution' AND reply_status <> 'skipped' AND protocol = 'regenerate' AND event > 0)::INTEGER AS regen_solutions,
        count(*) FILTER (WHERE reply_status = 'skipped' AND (response <> '' OR completion_tokens <> 0))::INTEGER AS bad_skips,
        count(*) FILTER (WHERE role = 'solution' AND reply_status <> 'skipped' AND prompt_tokens = 0)::INTEGER AS unasked_solutions
      FROM ${file}`);
    expect(c!.runs).toBe(6 * 2 * 4); // arms none, drift-policy, drift-policy-gold, regenerate
    expect(c!.judges).toBe(c!.runs * 6);
    expect(c!.early).toBe(0);
    expect(c!.stray_feedback).toBe(0);
    expect(c!.feedback_made).toBeGreaterThan(0);
    expect(c!.gold_feedback).toBeGreaterThan(0); // DRIFTPolicy alone: feedback after a gold drop, no judge call
    expect(c!.gold_judge_calls).toBe(0);
    expect(c!.bad_skips).toBe(0);
    expect(c!.unasked_solutions).toBe(0); // team.solution extracted (the default): each solution is an extraction call
    // Regenerate: 7 kept solutions per run plus one per regenerated turn, and each regenerated turn follows a DRIFT verdict.
    const [r] =
      await queryRows(`WITH v AS (SELECT run_id, sweep, response FROM ${file} WHERE role = 'drift-judge' AND protocol = 'regenerate')
      SELECT (SELECT count(*) FROM v WHERE response LIKE 'DRIFT%')::INTEGER AS flagged,
             (SELECT count(*) FROM ${file} WHERE role = 'solution' AND protocol = 'regenerate' AND reply_status <> 'skipped')::INTEGER AS made`);
    expect(r!.flagged).toBeGreaterThan(0);
    expect(r!.made).toBe(6 * 2 * 7 + r!.flagged);
  });

  it('panta verify fails a team corpus whose read set, skip or tally is not the schedule', async () => {
    const { spec, out } = await smallCorpus('drift-debate');
    const dir = tempDir();
    const parsed = parseSweepSpec(readFileSync(spec, 'utf8'), spec);
    resolveTeamSolution(parsed, dynamicsArms(parsed)); // as loadSweep does
    const prompts = parseDataset(readFileSync(join(ROOT, 'datasets', 'mmlu-pro28.jsonl'), 'utf8'), 'mmlu-pro28.jsonl');
    const run = planSweep(
      parsed,
      prompts.filter((p) => p.id === 'mp2804'),
      spec,
    ).find((r) => r.protocol === 'drift-policy')!;
    const shard = join(out, 'events', `${run.runId}.parquet`);
    expect(await checkTeamShard(shard, run)).toBeNull();
    const tampered = async (replace: string): Promise<string | null> => {
      const file = join(dir, `t${Math.random().toString(36).slice(2)}.parquet`);
      await queryRows(`COPY (SELECT * REPLACE (${replace}) FROM read_parquet('${shard}') ORDER BY event) TO '${file}' (FORMAT parquet)`);
      return checkTeamShard(file, run);
    };
    expect(await tampered(`CASE WHEN event = 3 THEN [0]::BIGINT[] ELSE read_versions END AS read_versions`)).toMatch(
      /event 3 .* read \[0\], its read set is \[0, 1, 2\]/,
    );
    expect(await tampered(`CASE WHEN role = 'solution' AND sweep = 1 THEN (agent + 1) % 3 ELSE agent END AS agent`)).toMatch(
      /the votes elect participant/,
    );
    // Every verdict flipped: each feedback call is made or skipped against its verdict.
    expect(
      await tampered(
        `CASE WHEN role = 'drift-judge' THEN (CASE WHEN response LIKE 'DRIFT%' THEN 'NO DRIFT' ELSE 'DRIFT: lack of progress.' END) ELSE response END AS response`,
      ),
    ).toMatch(/\(feedback, step 2\) is (made|skipped), but the verdict of event \d+ says/);
  });

  it('the served surrogate, through the real openai client, answers every team call as the in-process one does', async () => {
    const dir = tempDir();
    const prompts = ['multifact26', 'mmlu-pro28', 'claims24'].flatMap((d) =>
      parseDataset(readFileSync(join(ROOT, 'datasets', `${d}.jsonl`), 'utf8'), d),
    );
    const server = await startSurrogateServer({ prompts });
    try {
      // A hub splits no token budget (only a relay does): the relay's team.token_budget goes with it.
      const hub = example('lost-in-propagation', {
        ...SMALL['lost-in-propagation'],
        'dynamics: relay': 'dynamics: hub',
        'team: {token_budget: 480}': '',
      });
      for (const [name, text] of [...Object.keys(SMALL).map((n) => [n, example(n, SMALL[n]!)]), ['hub', hub]] as [string, string][]) {
        const local = writeSpec(dir, text, `${name}-local.yaml`);
        const served = writeSpec(
          dir,
          text.replace(
            'backend: {kind: surrogate}',
            `backend: {kind: openai, base_url: "${server.url}/v1", model: surrogate-potts-v1, max_in_flight: 16}`,
          ),
          `${name}-served.yaml`,
        );
        expect((await runSweep(local, { out: join(dir, `${name}-local`), logLevel: 'silent' })).status).toBe('complete');
        expect((await runSweep(served, { out: join(dir, `${name}-served`), logLevel: 'silent' })).status).toBe('complete');
        const cols = 'run_id, event, role, agent, seed, response, reply_status, prompt_tokens, completion_tokens, tag';
        const read = (out: string) => queryRows(`SELECT ${cols} FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event`);
        const [a, b] = [await read(join(dir, `${name}-served`)), await read(join(dir, `${name}-local`))];
        expect(a.length).toBeGreaterThan(0);
        expect(a).toEqual(b);
      }
    } finally {
      await server.close();
    }
  });

  it('a debate killed with SIGKILL mid-turn resumes to the corpus of an uninterrupted run', async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      example('drift-debate', {
        'trials: 2': 'trials: 2\nprompts: [mp2804, mp2808, mp70]\nconcurrency: 4',
        'backend: {kind: surrogate}': 'backend: {kind: surrogate, scenario: neutral, latency_ms: 3}',
      }),
      'debate.yaml',
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
    const resumed = panta(['run', spec, '--out', killed]);
    expect(resumed.code).toBe(0);
    expect((await verifyCorpus(killed)).problems).toEqual([]);
    const straight = join(dir, 'straight');
    expect((await runSweep(spec, { out: straight, logLevel: 'silent' })).status).toBe('complete');
    expect(await corpusDiff(killed, straight)).toEqual({ extra: 0, missing: 0 });
    const [n] = await queryRows(`SELECT count(*)::INTEGER AS n FROM read_parquet('${killed}/events/*.parquet')`);
    expect(n!.n).toBeGreaterThan(0);
  });
});
