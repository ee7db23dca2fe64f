import { cpSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  classifyAnswer,
  goldDriftVerdict,
  IFEVAL_CHECKS,
  ifevalStrict,
  InputError,
  parseDataset,
  parseSweepSpec,
  planSweep,
  teamCallCosts,
  teamCalls,
} from '@panta/core';
import { queryRows, readManifest, verifyCorpus, writeManifest } from '@panta/corpus';
import { BertScorer } from '@panta/embed';
import { corpusIdentity, loadSweep, runSweep } from '@panta/engine';
import { bertscoreTable } from '../packages/studies/src/teams/report/index.js';
import { ROOT, tempDir, writeSpec } from './helpers.js';

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

/** drift-debate.yaml made small (2 turns, 1 prompt, 1 trial, the neutral surrogate), with absolute paths and the given team block. */
function smallDebate(team: string): string {
  const text = read('examples/drift-debate.yaml')
    .replaceAll('../datasets/', `${ROOT}/datasets/`)
    .replace(/^out: .*$/m, '')
    .replace(/^team: .*$/m, team)
    .replace(/^sweeps: 7$/m, 'sweeps: 2\nprompts: [mp2804]')
    .replace(/^trials: 2$/m, 'trials: 1')
    .replace('backend: {kind: surrogate}', 'backend: {kind: surrogate, scenario: neutral}');
  expect(text).toContain('prompts: [mp2804]');
  return text;
}

/** smallDebate with team {memory: recent} (today's default solution, extracted), swept once for the file's tests that read it. */
let recentSwept: Promise<{ spec: string; out: string }> | undefined;
const recentDebate = () =>
  (recentSwept ??= (async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, smallDebate('team: {memory: recent}'), 'today.yaml');
    const out = join(dir, 'fresh');
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    return { spec, out };
  })());

const SOLUTIONS = (out: string) =>
  queryRows(
    `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE prompt_tokens > 0)::INTEGER AS asked FROM read_parquet('${out}/events/*.parquet') WHERE role = 'solution' AND reply_status <> 'skipped'`,
  );

describe("the Drift paper's debate as written (docs/departures.md: Drift)", () => {
  it("examples/drift-debate.yaml: a contribution reads the current and the previous turn only (the paper's Limitations)", () => {
    const spec = parseSweepSpec(read('examples/drift-debate.yaml'), 'drift-debate.yaml');
    expect(spec.team?.memory).toBe('recent');
    const runs = planSweep(spec, parseDataset(read('datasets/mmlu-pro28.jsonl'), 'mmlu-pro28.jsonl'), 'drift-debate.yaml');
    const run = runs.find((r) => r.protocol === 'glauber');
    if (!run) throw new Error('no glauber run');
    const calls = teamCalls(run);
    // The last turn's last persona: the contributions it reads are turn 6's and turn 7's, never an earlier turn's.
    const last = calls.filter((c) => c.role === 'persona' && c.sweep === 7).at(-1);
    const turns = new Set(last?.reads.filter((r) => r.kind === 'contribution').map((r) => r.turn));
    expect([...turns].sort()).toEqual([6, 7]);
  });

  it("the schema's default stays `all` (earlier corpora keep their fingerprint and meaning)", () => {
    const spec = parseSweepSpec(read('examples/drift-debate.yaml').replace(/^team: .*$/m, 'team: {}'), 'drift-debate.yaml');
    expect(spec.team?.memory).toBe('all');
  });

  it("a turn's solution is extracted from the winning contribution by a call (the paper's solution-extraction prompt); an old corpus (no key) stays verbatim", async () => {
    const dir = tempDir();
    const { spec, out: fresh } = await recentDebate();
    expect((readManifest(fresh)!.spec as { team?: { solution?: string } }).team?.solution).toBe('extracted');
    const [made] = await SOLUTIONS(fresh);
    expect(made!.n).toBeGreaterThan(0);
    expect(made!.asked).toBe(made!.n); // every solution is a call
    expect((await verifyCorpus(fresh)).problems).toEqual([]);
    // The verbatim option: the winner's text, no call; a corpus from before the key (none stored) reads back as it.
    const old = join(dir, 'old');
    const oldSpec = writeSpec(dir, smallDebate('team: {memory: recent, solution: verbatim}'), 'old.yaml');
    expect((await runSweep(oldSpec, { out: old, logLevel: 'silent' })).status).toBe('complete');
    const [counted] = await SOLUTIONS(old);
    expect(counted!.asked).toBe(0);
    const manifest = readManifest(old)!;
    delete (manifest.spec as { team: { solution?: string } }).team.solution;
    writeManifest(old, manifest);
    expect((await verifyCorpus(old)).problems).toEqual([]);
    // Today's YAML (no key) extracts: another corpus, refused, never mixed into the old one.
    await expect(runSweep(spec, { out: old, logLevel: 'silent' })).rejects.toThrow(/holds a corpus of a different sweep/);
    // A debate corpus from before team existed at all (no team block): refused with the key to write, and resumed with it.
    const bare = join(dir, 'bare');
    const bareSpec = writeSpec(dir, smallDebate(''), 'bare.yaml');
    const withKey = writeSpec(dir, smallDebate('team: {solution: verbatim}'), 'with-key.yaml');
    // Its identity is the bare spec's, as a corpus from before the key was fingerprinted (no team block).
    const bareParsed = parseSweepSpec(smallDebate(''), 'bare.yaml');
    expect(corpusIdentity(parseSweepSpec(smallDebate('team: {solution: verbatim}'), 'with-key.yaml'))).toEqual(corpusIdentity(bareParsed));
    expect((await runSweep(withKey, { out: bare, logLevel: 'silent' })).status).toBe('complete');
    const stored = readManifest(bare)!;
    delete (stored.spec as { team?: unknown }).team;
    writeManifest(bare, stored);
    await expect(runSweep(bareSpec, { out: bare, logLevel: 'silent' })).rejects.toThrow(/write team: \{solution: verbatim\} to resume/);
    expect((await runSweep(withKey, { out: bare, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(bare)).problems).toEqual([]);
  }, 60_000);

  it('a debate corpus whose spec wrote a bare team: {memory: all} before team.solution resumes with solution: verbatim written out', async () => {
    const dir = tempDir();
    const out = join(dir, 'kept');
    const spec = writeSpec(dir, smallDebate('team: {memory: all, solution: verbatim}'), 'kept.yaml');
    // Such a corpus was fingerprinted with its block as written: team {memory: all}, which today's identity
    // drops (a block holding only the default reads as no block); the earlier reading is kept as a former one.
    const parsed = parseSweepSpec(smallDebate('team: {memory: all, solution: verbatim}'), 'kept.yaml');
    expect((corpusIdentity(parsed, { keepBareTeam: true }) as { team?: unknown }).team).toEqual({ memory: 'all' });
    expect((corpusIdentity(parsed) as { team?: unknown }).team).toBeUndefined();
    const loaded = loadSweep(spec, { out });
    expect(loaded.formerFingerprints).toHaveLength(1);
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    const manifest = readManifest(out)!;
    delete (manifest.spec as { team: { solution?: string } }).team.solution;
    manifest.fingerprint = loaded.formerFingerprints![0]!;
    writeManifest(out, manifest);
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    // Any other fingerprint is still another sweep.
    manifest.fingerprint = 'f'.repeat(64);
    writeManifest(out, manifest);
    await expect(runSweep(spec, { out, logLevel: 'silent' })).rejects.toThrow(/holds a corpus of a different sweep/);
  }, 60_000);

  it('DRIFTPolicy alone: arm drift-policy-gold gates the moderator by the gold (no judge call), verifies, and is left out of the judge-detection table', async () => {
    const dir = tempDir();
    const text = read('examples/drift-debate.yaml')
      .replaceAll('../datasets/', `${ROOT}/datasets/`)
      .replace(/^out: .*$/m, '')
      .replace(/^protocol: .*$/m, 'protocol: drift-policy-gold')
      .replace(/^sweeps: 7$/m, 'sweeps: 5\nprompts: [mp2804, mp2808, mp70, mp71]')
      .replace(/^trials: 2$/m, 'trials: 2');
    expect(text).toContain('protocol: drift-policy-gold');
    const spec = writeSpec(dir, text, 'gold.yaml');
    const out = join(dir, 'out');
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const file = `read_parquet('${out}/events/*.parquet')`;
    const verdicts = await queryRows(`SELECT run_id, sweep, response, prompt_tokens FROM ${file} WHERE role = 'drift-judge'`);
    expect(verdicts.length).toBeGreaterThan(0);
    expect(verdicts.every((v) => v.prompt_tokens === 0 && /^(NO )?DRIFT: /.test(String(v.response)))).toBe(true);
    const [f] = await queryRows(`SELECT count(*) FILTER (WHERE reply_status <> 'skipped')::INTEGER AS made,
        count(*)::INTEGER AS planned FROM ${file} WHERE role = 'feedback'`);
    expect(f!.made).toBeGreaterThan(0); // the gold found drift somewhere, and the policy answered it
    expect(f!.made).toBeLessThan(f!.planned);
    // The verdict by hand: gold fact recall of the previous solution against this one.
    const prompt = parseDataset(read('datasets/mmlu-pro28.jsonl'), 'mmlu-pro28.jsonl').find((p) => p.id === 'mp70')!;
    expect(goldDriftVerdict(prompt, prompt.accepted[0]!, 'something else entirely')).toMatch(/^DRIFT: .*1\.00 -> 0\.00/);
    expect(goldDriftVerdict(prompt, 'something else entirely', 'something else')).toMatch(/^NO DRIFT/);
    // panta plan counts no judge call for it.
    const run = planSweep(parseSweepSpec(text, 'gold.yaml'), [prompt], 'gold.yaml')[0]!;
    expect(teamCallCosts(run, 50).map((c) => c.role)).not.toContain('drift-judge');
  }, 60_000);

  it("a consensus protocol beside voting: team.decision consensus has no vote calls, and each turn's solution is its last contribution (the draft as all improved it)", async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const spec = writeSpec(dir, smallDebate('team: {memory: recent, solution: verbatim, decision: consensus}'), 'consensus.yaml');
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const file = `read_parquet('${out}/events/*.parquet')`;
    const [v] = await queryRows(`SELECT count(*) FILTER (WHERE role = 'vote')::INTEGER AS votes FROM ${file}`);
    expect(v!.votes).toBe(0);
    const [m] =
      await queryRows(`SELECT count(*)::INTEGER AS solutions, count(*) FILTER (WHERE s.agent = 2 AND s.response = c.response)::INTEGER AS last
      FROM ${file} s JOIN ${file} c ON c.run_id = s.run_id AND c.role = 'persona' AND c.sweep = s.sweep AND c.agent = 2
        AND c.event = (SELECT max(event) FROM ${file} x WHERE x.run_id = s.run_id AND x.role = 'persona' AND x.sweep = s.sweep AND x.event < s.event)
      WHERE s.role = 'solution' AND s.reply_status <> 'skipped'`);
    expect(m!.solutions).toBeGreaterThan(0);
    expect(m!.last).toBe(m!.solutions);
  }, 60_000);

  it("datasets/ifeval510.jsonl: IFEval's prompts (all 541 but the 31 asking for a response language), each instruction one ifevalStrict checks", () => {
    const prompts = parseDataset(read('datasets/ifeval510.jsonl'), 'ifeval510.jsonl');
    expect(prompts).toHaveLength(510);
    expect(prompts.every((p) => p.instructions!.every((i) => IFEVAL_CHECKS.includes(i.id)))).toBe(true);
    const ids = new Set(prompts.flatMap((p) => p.instructions!.map((i) => i.id)));
    expect(ids.size).toBe(24); // every check but response_language is used
    // A prompt set asking for an instruction Panta cannot check is refused when read, naming the field.
    const line = JSON.stringify({ ...prompts[0], instructions: [{ id: 'language:response_language', args: { language: 'kn' } }] });
    expect(() => parseDataset(line, 'x.jsonl')).toThrow(InputError);
    expect(() => parseDataset(line, 'x.jsonl')).toThrow(/instructions/);
    // No accepted answer is allowed only beside instructions.
    expect(() => parseDataset(JSON.stringify({ ...prompts[0], instructions: undefined }), 'x.jsonl')).toThrow(/accepted/);
  });

  it("IFEval's strict accuracy is a debate's score on an IFEval prompt: teams.parquet's exact match and fact recall are ifevalStrict of each turn's solution, recomputed by verify", async () => {
    const dir = tempDir();
    const text = smallDebate('team: {memory: recent}')
      .replace(/^dataset: .*$/m, `dataset: ${ROOT}/datasets/ifeval510.jsonl`)
      .replace('prompts: [mp2804]', 'prompts: [if1001, if1019, if1051]');
    const spec = writeSpec(dir, text, 'ifeval.yaml');
    const out = join(dir, 'out');
    expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const prompts = new Map(parseDataset(read('datasets/ifeval510.jsonl'), 'ifeval510.jsonl').map((p) => [p.id, p]));
    const rows = await queryRows(`SELECT prompt_id, turn, answer, exact_match, fact_recall FROM read_parquet('${out}/teams.parquet')`);
    expect(rows.length).toBe(3 * 4 * 2); // 3 prompts, 4 arms, 2 turns
    for (const r of rows) {
      const want = ifevalStrict(String(r.answer), prompts.get(String(r.prompt_id))!.instructions!);
      expect([r.exact_match, r.fact_recall]).toEqual([want, want]);
    }
    // The surrogate's solution ("I propose: ...", no comma, capitals) follows if1001 (no comma), not the lowercase ones.
    expect(new Set(rows.map((r) => `${r.prompt_id}:${r.exact_match}`))).toEqual(new Set(['if1001:1', 'if1019:0', 'if1051:0']));
    // By hand on two texts:
    const noComma = prompts.get('if1001')!; // punctuation:no_comma
    expect(ifevalStrict('A plan in the style of the Bard', noComma.instructions!)).toBe(1);
    expect(ifevalStrict('A plan, in the style of the Bard', noComma.instructions!)).toBe(0);
  }, 60_000);

  it("BERTScore of each debate turn's solution against the references: team_bertscore.parquet on the named ONNX encoder, recomputed by verify; without a model the report says so", async () => {
    const dir = tempDir();
    // The encoder beside the spec, named by a path relative to it (as encoders' paths are).
    const fixture = join(dir, 'tiny-encoder');
    cpSync(join(ROOT, 'packages/embed/test/fixtures/tiny-encoder'), fixture, { recursive: true });
    const scored = join(dir, 'scored');
    const spec = writeSpec(dir, smallDebate('team: {memory: recent, bertscore: {model: tiny-encoder, idf: true}}'), 'bert.yaml');
    expect((await runSweep(spec, { out: scored, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(scored)).problems).toEqual([]);
    const rows = await queryRows(
      `SELECT b.run_id, b.turn, b.bertscore_f1, b.bertscore_precision, b.model, t.answer FROM read_parquet('${scored}/team_bertscore.parquet') b JOIN read_parquet('${scored}/teams.parquet') t USING (run_id, turn) ORDER BY b.run_id, b.turn`,
    );
    expect(rows.length).toBe(4 * 2); // 4 arms, 2 turns, one prompt
    expect(String(rows[0]!.model)).toMatch(/^tiny-encoder@sha256:[0-9a-f]{12} idf$/);
    // By hand: the scorer on the stored answer against mp2804's reference, idf over the corpus's references (the one).
    const prompt = parseDataset(read('datasets/mmlu-pro28.jsonl'), 'mmlu-pro28.jsonl').find((p) => p.id === 'mp2804')!;
    const scorer = await BertScorer.open({ path: fixture, idf: true });
    const [want] = await scorer.score([[String(rows[0]!.answer), prompt.accepted]]);
    await scorer.close();
    expect(Number(rows[0]!.bertscore_f1)).toBeCloseTo(want!.f1, 9);
    expect(Number(rows[0]!.bertscore_precision)).toBeCloseTo(want!.precision, 9);
    // A tampered score is found by verify.
    const file = join(scored, 'team_bertscore.parquet');
    await queryRows(
      `COPY (SELECT * REPLACE (bertscore_f1 + 0.01 AS bertscore_f1) FROM read_parquet('${file}')) TO '${file}.x' (FORMAT parquet)`,
    );
    renameSync(`${file}.x`, file);
    expect((await verifyCorpus(scored)).problems.join('\n')).toMatch(/team_bertscore\.parquet: run .* bertscore_f1 differs/);
    // The encoder gone: verify says in one line that it cannot recompute the scores.
    rmSync(fixture, { recursive: true });
    expect((await verifyCorpus(scored)).problems.join('\n')).toMatch(/team_bertscore\.parquet: cannot recompute BERTScore/);
    // No model named: rows without scores, and the report's table says why instead of a number.
    const { out: plain } = await recentDebate();
    const [n] = await queryRows(
      `SELECT count(*)::INTEGER AS rows, count(bertscore_f1)::INTEGER AS scored FROM read_parquet('${plain}/team_bertscore.parquet')`,
    );
    expect(n).toEqual({ rows: 8, scored: 0 });
    const table = bertscoreTable(await queryRows(`SELECT * FROM read_parquet('${plain}/team_bertscore.parquet')`))!;
    expect(table.rows).toEqual([]);
    expect(table.empty).toMatch(/names no encoder \(team\.bertscore\.model/);
  }, 60_000);

  it("datasets/aqua-rat.jsonl: AQUA-RAT's test problems (the paper's multiple-choice reasoning task) that the reference judge can score: each gold option judged correct, each other option false", () => {
    const prompts = parseDataset(read('datasets/aqua-rat.jsonl'), 'aqua-rat.jsonl');
    expect(prompts).toHaveLength(234); // of the test split's 254: 20 have options the judge cannot tell apart
    for (const p of prompts) {
      expect(p.choices).toContain(p.accepted[0]);
      expect(classifyAnswer(p, `The answer is ${p.accepted[0]}.`).kind, p.id).toBe('correct');
      for (const f of p.false_answers) expect(classifyAnswer(p, `The answer is ${f}.`).kind, `${p.id}: ${f}`).toBe('false');
    }
    const gold = prompts.find((p) => p.id === 'aq2')!; // by hand from test.json line 2: correct E, "$78.20"
    expect(gold.accepted).toEqual(['$78.20']);
  });

  it("datasets/mmlu-pro392.jsonl: 28 MMLU-Pro questions per category (at least the paper's 384 for a 95% / 5% margin sample), mmlu-pro28 its first two of each", () => {
    const big = parseDataset(read('datasets/mmlu-pro392.jsonl'), 'mmlu-pro392.jsonl');
    const small = parseDataset(read('datasets/mmlu-pro28.jsonl'), 'mmlu-pro28.jsonl');
    expect(big.length).toBeGreaterThanOrEqual(384);
    const category = (p: { source?: string }) => /category=([^;]+)/.exec(p.source ?? '')?.[1];
    const counts = new Map<string, number>();
    for (const p of big) counts.set(category(p)!, (counts.get(category(p)!) ?? 0) + 1);
    expect([...counts.values()]).toEqual(new Array(14).fill(28));
    const ids = new Set(big.map((p) => p.id));
    expect(small.every((p) => ids.has(p.id))).toBe(true);
  });
});
