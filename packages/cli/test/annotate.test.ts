import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { csvLine, parseCsv } from '@panta/core';
import { queryRows } from '@panta/corpus';
import { RHEON6, panta, tempDir, writeSpec, pantaInProcess as cli } from '../../../test/helpers.js';

// 2 prompts x 2 temperatures x 2 trials on an 8-ring, 2 sweeps: 4 configurations, 192 answers.
const SPEC = `name: annotate
dataset: ${RHEON6}
prompts: [fq117, fq75]
geometries: [ring]
sizes: [8]
temperatures: [0.2, 1.4]
trials: 2
sweeps: 2
seed: 5
backend: {kind: surrogate}
encoders: [{name: h16, kind: hashing, dim: 16}]
judge: {kind: reference}
`;

let dir: string;
let corpus: string;
let sample: string;
let rows: string[][];
let header: string[];

beforeAll(async () => {
  dir = tempDir();
  corpus = join(dir, 'corpus');
  expect((await cli(['run', writeSpec(dir, SPEC), '--out', corpus])).code).toBe(0);
  sample = join(dir, 'sample.csv');
  const r = await cli(['annotate', 'export', corpus, '--n', '12', '--seed', '3', '--out', sample]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^annotate: .*sample\.csv: 12 answers over 4 configurations, seed 3 \(/);
  [header, ...rows] = parseCsv(readFileSync(sample, 'utf8'));
});

const col = (name: string) => header.indexOf(name);
const keyOf = (r: string[]) => `${r[col('run_id')]}/${r[col('event')]}`;

/** The judge's tag of every answer, read straight from the shards. */
async function judgeTags(): Promise<Map<string, { tag: string; prompt: string; config: string }>> {
  const all = await queryRows(
    `SELECT run_id, event, tag, prompt_id, config_id FROM read_parquet('${corpus}/events/*.parquet') WHERE role = 'agent'`,
  );
  return new Map(
    all.map((t) => [`${t.run_id}/${t.event}`, { tag: String(t.tag), prompt: String(t.prompt_id), config: String(t.config_id) }]),
  );
}

/** Kappa written out for the test: p_o from the matches, p_e from the two raters' label shares. */
function handKappa(a: string[], b: string[]): number | null {
  const n = a.length;
  const po = a.filter((x, i) => x === b[i]).length / n;
  const labels = [...new Set([...a, ...b])];
  const pe = labels.reduce((s, l) => s + (a.filter((x) => x === l).length / n) * (b.filter((x) => x === l).length / n), 0);
  return pe === 1 ? null : (po - pe) / (1 - pe);
}

describe('panta annotate export', () => {
  it('writes a blind sample: no judge verdict, empty labels, ids that map back to (run_id, event), every configuration', async () => {
    expect(header).toEqual(['id', 'run_id', 'event', 'sweep', 'agent', 'prompt_id', 'question', 'response', 'label', 'comment']);
    expect(rows).toHaveLength(12);
    expect(rows.map((r) => r[0])).toEqual(Array.from({ length: 12 }, (_, i) => `a${String(i + 1).padStart(2, '0')}`));
    expect(rows.every((r) => r[col('label')] === '' && r[col('comment')] === '')).toBe(true);
    const tags = await judgeTags();
    const configs = new Set<string>();
    for (const r of rows) {
      const t = tags.get(keyOf(r));
      expect(t, keyOf(r)).toBeDefined();
      configs.add(t!.config);
    }
    expect(configs.size).toBe(4);
    expect(new Set(rows.map(keyOf)).size).toBe(12);
    const [resp] = await queryRows(
      `SELECT response FROM read_parquet('${corpus}/events/*.parquet') WHERE run_id = '${rows[0][col('run_id')]}' AND event = ${rows[0][col('event')]}`,
    );
    expect(rows[0][col('response')]).toBe(resp.response);
    expect(rows[0][col('question')].length).toBeGreaterThan(10);
  });

  it('oversamples rare tags by equal allocation: counts as water filling gives them from the corpus tag counts', async () => {
    const counts = await queryRows(
      `SELECT tag, count(*)::INT AS n FROM read_parquet('${corpus}/events/*.parquet') WHERE role = 'agent' AND tag IN ('correct', 'hallucinated', 'not_known') GROUP BY tag`,
    );
    // Water filling by hand: raise a common level until 12 are drawn, no tag beyond what it has.
    const avail = Object.fromEntries(counts.map((c) => [String(c.tag), Number(c.n)]));
    let level = 0;
    const total = (l: number) => Object.values(avail).reduce((s, a) => s + Math.min(a, l), 0);
    while (total(level + 1) <= 12) level++;
    const side = JSON.parse(readFileSync(join(dir, 'sample.sampling.json'), 'utf8'));
    expect(side.seed).toBe(3);
    expect(side.n).toBe(12);
    expect(side.method).toMatch(/equal allocation/);
    const drawn = Object.fromEntries(Object.entries(side.per_tag).map(([t, c]) => [t, (c as { drawn: number }).drawn]));
    for (const [t, a] of Object.entries(avail)) expect(drawn[t]).toBeGreaterThanOrEqual(Math.min(a, level));
    expect(Object.values(drawn).reduce((s, d) => s + (d as number), 0)).toBe(12);
    // and the CSV holds exactly those tags
    const tags = await judgeTags();
    const inCsv: Record<string, number> = {};
    for (const r of rows) inCsv[tags.get(keyOf(r))!.tag] = (inCsv[tags.get(keyOf(r))!.tag] ?? 0) + 1;
    expect(inCsv).toEqual(Object.fromEntries(Object.entries(drawn).filter(([, d]) => (d as number) > 0)));
  });

  it('is seeded: the same seed gives the same file; a sample is never overwritten (exit 2)', async () => {
    const again = join(dir, 'again.csv');
    expect((await cli(['annotate', 'export', corpus, '--n', '12', '--seed', '3', '--out', again])).code).toBe(0);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(sample, 'utf8'));
    // The binary: the refusal's exit status is the process's.
    const r = panta(['annotate', 'export', corpus, '--n', '12', '--out', sample]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/sample\.csv: --out: exists .*; fix: give another --out/);
    const small = await cli(['annotate', 'export', corpus, '--n', '3', '--out', join(dir, 'x.csv')]);
    expect(small.code).toBe(2);
    expect(small.stderr.trim().split('\n')).toHaveLength(1);
    expect(small.stderr).toMatch(/--n: 3 cannot cover 4 configurations .*fix: give --n between 4 and 192/);
    expect(existsSync(join(dir, 'x.csv'))).toBe(false);
  });
});

describe('panta annotate score', () => {
  // Two synthetic annotators with a known agreement: A vs B is computed by hand below.
  const A = 'correct correct correct correct correct hallucinated hallucinated hallucinated not_known not_known correct hallucinated'.split(
    ' ',
  );
  const B = 'correct correct correct correct hallucinated hallucinated hallucinated not_known not_known correct correct hallucinated'.split(
    ' ',
  );
  const fileWith = (name: string, labels: string[]) => {
    const f = join(dir, `${name}.csv`);
    writeFileSync(f, `${[header, ...rows.map((r, i) => r.map((v, j) => (j === col('label') ? labels[i] : v)))].map(csvLine).join('\n')}\n`);
    return f;
  };

  it("A vs B: p_o = 9/12, p_e = (6/12)² + (4/12)² + (2/12)² = 7/18, kappa = 13/22; the judge's rows against hand-written kappas", async () => {
    const r = await cli(['annotate', 'score', corpus, fileWith('alice', A), fileWith('bob', B)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^alice vs bob\tpooled\tn 12\tagreement 75\.0%\tkappa 0\.591$/m);
    const rec = JSON.parse(readFileSync(join(corpus, 'annotation.json'), 'utf8'));
    expect(rec.raters).toEqual(['judge', 'alice', 'bob']);
    const pair = (a: string, b: string, scope: string) =>
      rec.pairs.find((p: { a: string; b: string; scope: string }) => p.a === a && p.b === b && p.scope === scope);
    expect(pair('alice', 'bob', 'pooled').kappa).toBeCloseTo(13 / 22, 12);
    expect(pair('alice', 'bob', 'pooled').agreement).toBeCloseTo(0.75, 12);
    const tags = await judgeTags();
    const judge = rows.map((row) => tags.get(keyOf(row))!.tag);
    const prompts = rows.map((row) => tags.get(keyOf(row))!.prompt);
    expect(pair('judge', 'alice', 'pooled').kappa).toBeCloseTo(handKappa(judge, A)!, 12);
    expect(pair('judge', 'bob', 'pooled').kappa).toBeCloseTo(handKappa(judge, B)!, 12);
    for (const p of ['fq117', 'fq75']) {
      const at = prompts.map((x, i) => (x === p ? i : -1)).filter((i) => i >= 0);
      const row = pair('alice', 'bob', p);
      expect(row.n).toBe(at.length);
      const k = handKappa(
        at.map((i) => A[i]),
        at.map((i) => B[i]),
      );
      if (k === null) expect(row.kappa).toBeNull();
      else expect(row.kappa).toBeCloseTo(k, 12);
    }
  });

  it('judge vs an annotator who copies its tags: agreement 100%, kappa 1', async () => {
    const tags = await judgeTags();
    const r = await cli([
      'annotate',
      'score',
      corpus,
      fileWith(
        'copy',
        rows.map((row) => tags.get(keyOf(row))!.tag),
      ),
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^judge vs copy\tpooled\tn 12\tagreement 100\.0%\tkappa 1\.000$/m);
  });

  it('all one label on both sides: kappa is printed as undefined, not NaN', async () => {
    const one = Array.from({ length: 12 }, () => 'not_known');
    // The second annotator's rows in another order: the same labels, another file (a copy is refused).
    const nk2 = join(dir, 'nk2.csv');
    writeFileSync(
      nk2,
      `${[header, ...rows.map((r) => r.map((v, j) => (j === col('label') ? 'not_known' : v))).reverse()].map(csvLine).join('\n')}\n`,
    );
    const r = await cli(['annotate', 'score', corpus, fileWith('nk1', one), nk2]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^nk1 vs nk2\tpooled\tn 12\tagreement 100\.0%\tkappa undefined \(both raters gave every item the same single label\)$/m,
    );
    expect(r.stdout).not.toMatch(/NaN/);
  });

  it('one file given twice (the same path, a link to it, or a copy) is refused in one line naming both, and nothing is written', async () => {
    const before = readFileSync(join(corpus, 'annotation.json'), 'utf8');
    const alice = fileWith('alice', A);
    const same = await cli(['annotate', 'score', corpus, alice, alice]);
    expect(same.code).toBe(2);
    expect(same.stderr).toBe(
      `panta: ${alice}: is the same file as ${alice}, given twice; fix: give each annotator's own CSV once (one file scored as two raters agrees with itself)\n`,
    );
    const link = join(dir, 'alice-link.csv');
    rmSync(link, { force: true });
    symlinkSync(alice, link);
    expect((await cli(['annotate', 'score', corpus, alice, link])).stderr).toMatch(
      /alice-link\.csv: is the same file as .*alice\.csv, given twice/,
    );
    const copy = join(dir, 'carol.csv');
    cpSync(alice, copy);
    const copied = await cli(['annotate', 'score', corpus, fileWith('bob', B), alice, copy]);
    expect(copied.code).toBe(2);
    expect(copied.stderr).toMatch(/^panta: .*carol\.csv: has the same content as .*alice\.csv; fix: /);
    expect(copied.stderr.trim().split('\n')).toHaveLength(1);
    expect(readFileSync(join(corpus, 'annotation.json'), 'utf8')).toBe(before);
  });

  it('labels are read as people type them: any case, "not known" and "not-known" for not_known', async () => {
    const typed = A.map((l, i) => (l === 'not_known' ? (i % 2 === 0 ? 'Not known' : 'NOT-KNOWN') : l.toUpperCase()));
    const r = await cli(['annotate', 'score', corpus, fileWith('typed', typed), fileWith('bob', B)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^typed vs bob\tpooled\tn 12\tagreement 75\.0%\tkappa 0\.591$/m);
  });

  it('a bad label is one line naming the file, the row, the field and the fix (exit 2), and nothing is written', async () => {
    const before = readFileSync(join(corpus, 'annotation.json'), 'utf8');
    const bad = [...A];
    bad[2] = 'maybe';
    const f = fileWith('bad', bad);
    const r = await cli(['annotate', 'score', corpus, f]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`panta: ${f}: row 4 (id a03): label: "maybe" is not a label; fix: write correct, hallucinated, not_known\n`);
    const empty = [...A];
    empty[0] = '';
    const r2 = await cli(['annotate', 'score', corpus, fileWith('empty', empty)]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/empty\.csv: row 2 \(id a01\): label: empty; fix: write correct, hallucinated, not_known\n$/);
    expect(readFileSync(join(corpus, 'annotation.json'), 'utf8')).toBe(before);
  });
});

describe('a post-hoc judge (panta judge) is a rater too', () => {
  let alt: string;
  beforeAll(async () => {
    // The corpus as panta judge --name alt leaves it: a tag_alt column in every shard (here the sweep's tags
    // with correct and hallucinated swapped) and the judge listed in the manifest.
    alt = join(dir, 'alt');
    cpSync(corpus, alt, { recursive: true });
    rmSync(join(alt, 'annotation.json'), { force: true });
    for (const f of readdirSync(join(alt, 'events')).filter((x) => x.endsWith('.parquet'))) {
      const shard = join(alt, 'events', f);
      await queryRows(
        `COPY (SELECT *, CASE tag WHEN 'correct' THEN 'hallucinated' WHEN 'hallucinated' THEN 'correct' ELSE tag END AS tag_alt FROM read_parquet('${shard}'))
         TO '${shard}.tmp' (FORMAT parquet)`,
      );
      renameSync(`${shard}.tmp`, shard);
    }
    const manifest = JSON.parse(readFileSync(join(alt, 'manifest.json'), 'utf8'));
    manifest.judges = [{ name: 'alt', kind: 'llm', model: 'swap', calls: 0, tags: {} }];
    writeFileSync(join(alt, 'manifest.json'), JSON.stringify(manifest));
  });

  it("export --judge alt stratifies on tag_alt; score puts judge:alt beside the sweep's judge", async () => {
    const out = join(dir, 'alt-sample.csv');
    const r = await cli(['annotate', 'export', alt, '--n', '12', '--seed', '3', '--judge', 'alt', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const side = JSON.parse(readFileSync(join(dir, 'alt-sample.sampling.json'), 'utf8'));
    expect(side.stratified_on).toMatch(/tag_alt/);
    const counts = await queryRows(
      `SELECT tag_alt AS t, count(*)::INT AS n FROM read_parquet('${alt}/events/*.parquet') WHERE role = 'agent' AND tag_alt IN ('correct', 'hallucinated', 'not_known') GROUP BY ALL`,
    );
    for (const c of counts) expect(side.per_tag[String(c.t)].available).toBe(Number(c.n));

    const [h, ...rs] = parseCsv(readFileSync(out, 'utf8'));
    const at = (name: string) => h.indexOf(name);
    const shown = await queryRows(`SELECT run_id, event, tag, tag_alt FROM read_parquet('${alt}/events/*.parquet') WHERE role = 'agent'`);
    const of = new Map(shown.map((x) => [`${x.run_id}/${x.event}`, x]));
    const altTags = rs.map((row) => String(of.get(`${row[at('run_id')]}/${row[at('event')]}`)!.tag_alt));
    const own = rs.map((row) => String(of.get(`${row[at('run_id')]}/${row[at('event')]}`)!.tag));
    const file = join(dir, 'carol.csv');
    writeFileSync(file, `${[h, ...rs.map((row, i) => row.map((v, j) => (j === at('label') ? altTags[i] : v)))].map(csvLine).join('\n')}\n`);
    const s = await cli(['annotate', 'score', alt, file]);
    expect(s.stderr).toBe('');
    expect(s.code).toBe(0);
    expect(s.stdout).toMatch(/^judge:alt vs carol\tpooled\tn 12\tagreement 100\.0%\tkappa 1\.000$/m);
    const rec = JSON.parse(readFileSync(join(alt, 'annotation.json'), 'utf8'));
    expect(rec.raters).toEqual(['judge', 'judge:alt', 'carol']);
    const pair = rec.pairs.find(
      (p: { a: string; b: string; scope: string }) => p.a === 'judge' && p.b === 'judge:alt' && p.scope === 'pooled',
    );
    expect(pair.kappa).toBeCloseTo(handKappa(own, altTags)!, 12);
  });

  it('an unknown --judge is one line naming it and the judges there are (exit 2), nothing written', async () => {
    const out = join(dir, 'none.csv');
    const r = await cli(['annotate', 'export', alt, '--n', '12', '--judge', 'nope', '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--judge: "nope" is no post-hoc judge of this corpus; fix: use one of alt/);
    expect(existsSync(out)).toBe(false);
  });
});
