import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { RHEON6, panta, pantaInProcess, tempDir, writeSpec } from '../../../test/helpers.js';

type Panta = (args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>;

/**
 * A real corpus (2 prompts on a 4-ring, 2 trials, 1 sweep, 2 encoders) whose order_params.parquet is then
 * replaced by hand-chosen rows, so every number of the paper's tables and figures can be worked out by hand:
 *
 *   run        sweep 0 (c, h, nk)  sweep 1 (c, h, nk)  ρ(0) → ρ(1)   majority        q final e1, e2   m final e1
 *   fq117 t0   1 3 0               3 1 0               .75 → .25     h → c repaired  .9  .8           .9
 *   fq117 t1   2 2 0               0 4 0               .5  → 1       tie → h other   .5  .6           .7
 *   fq75  t0   3 1 0               1 2 1               .25 → 2/3     c → h corrupted .7  .4           .6
 *   fq75  t1   0 0 4               4 0 0               n/a → 0       none → c other  .3  .2           .6
 */
const SPEC = `name: paper
dataset: ${RHEON6}
prompts: [fq117, fq75]
geometries: [ring]
sizes: [4]
temperatures: [0.5]
trials: 2
sweeps: 1
seed: 3
backend: {kind: surrogate}
encoders: [{name: e1, kind: hashing, dim: 16}, {name: e2, kind: hashing, dim: 8}]
judge: {kind: reference}
`;

type Counts = [number, number, number];
const RUNS: { prompt: string; trial: number; tags: [Counts, Counts]; q: [number, number]; m: number }[] = [
  {
    prompt: 'fq117',
    trial: 0,
    tags: [
      [1, 3, 0],
      [3, 1, 0],
    ],
    q: [0.9, 0.8],
    m: 0.9,
  },
  {
    prompt: 'fq117',
    trial: 1,
    tags: [
      [2, 2, 0],
      [0, 4, 0],
    ],
    q: [0.5, 0.6],
    m: 0.7,
  },
  {
    prompt: 'fq75',
    trial: 0,
    tags: [
      [3, 1, 0],
      [1, 2, 1],
    ],
    q: [0.7, 0.4],
    m: 0.6,
  },
  {
    prompt: 'fq75',
    trial: 1,
    tags: [
      [0, 0, 4],
      [4, 0, 0],
    ],
    q: [0.3, 0.2],
    m: 0.6,
  },
];

let dir: string;
let corpus: string;

function sectionRows(html: string, id: string): string[][] {
  const section = new RegExp(`<section id="${id}">([\\s\\S]*?)</section>`).exec(html)?.[1];
  expect(section, `section ${id}`).toBeDefined();
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(section!)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((tr) => [...tr[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((td) => td[1]));
}
const caption = (html: string, id: string) =>
  new RegExp(`<section id="${id}">[\\s\\S]*?<p class="caption">([\\s\\S]*?)</p>`).exec(html)?.[1] ?? '';
const figCaption = (html: string, id: string) =>
  new RegExp(`<section id="${id}">[\\s\\S]*?<figcaption>([\\s\\S]*?)</figcaption>`).exec(html)?.[1] ?? '';

async function report(args: string[] = [], out = 'report', run: Panta = pantaInProcess): Promise<{ html: string; out: string }> {
  const r = await run(['report', corpus, '--out', join(dir, out), ...args]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return { html: readFileSync(join(dir, out, 'index.html'), 'utf8'), out: join(dir, out) };
}
/**
 * The report with no option, made once: most tests read a different part of the same output (a spawn of
 * `panta report` renders 16 figures as SVG and PNG, ~5 s of CPU).
 */
let plain: Promise<{ html: string; out: string }> | undefined;
const defaultReport = () => (plain ??= report([], 'report', async (args) => panta(args)));
const specValues = (out: string, id: string) =>
  (JSON.parse(readFileSync(join(out, 'figures', `${id}.vl.json`), 'utf8')) as { data: { values: Record<string, unknown>[] } }).data.values;

beforeAll(async () => {
  dir = tempDir();
  corpus = join(dir, 'corpus');
  // The sweep is the fixture, not what is tested: run in this process (the report is what spawns `panta`).
  expect((await runSweep(writeSpec(dir, SPEC), { out: corpus, logLevel: 'silent' })).status).toBe('complete');
  const runs = await queryRows(`SELECT run_id, config_id, prompt_id, trial FROM read_parquet('${corpus}/runs.parquet')`);
  const values: string[] = [];
  for (const r of RUNS) {
    const run = runs.find((x) => x.prompt_id === r.prompt && Number(x.trial) === r.trial)!;
    const rho = ([c, h]: Counts) => (c + h === 0 ? 'NULL' : String(h / (c + h)));
    for (const sweep of [0, 1]) {
      const [c, h, nk] = r.tags[sweep];
      const delta =
        rho(r.tags[0]) === 'NULL' || rho(r.tags[sweep]) === 'NULL' ? 'NULL' : String(Number(rho(r.tags[sweep])) - Number(rho(r.tags[0])));
      for (const [e, enc] of ['e1', 'e2'].entries()) {
        const q = sweep === 1 ? r.q[e] : 0.1;
        const m = sweep === 1 ? r.m : 0.3;
        // CDS: 0.8 at t = 0, then 0.2 on trial 0 and 0.4 on trial 1 (mean 0.3, SE 0.1)
        const cds = sweep === 0 ? 0.8 : r.trial === 0 ? 0.2 : 0.4;
        values.push(
          `('${run.run_id}', '${run.config_id}', ${sweep}, '${enc}', ${m}, ${q}, ${rho(r.tags[sweep])}, ${delta}, ${c}, ${h}, ${nk}, 0, ${cds})`,
        );
      }
    }
  }
  await queryRows(
    `COPY (SELECT run_id, config_id, sweep::INTEGER AS sweep, encoder, magnetisation::DOUBLE AS magnetisation, cohesion::DOUBLE AS cohesion, rho::DOUBLE AS rho,
       delta_rho::DOUBLE AS delta_rho, n_correct::INTEGER AS n_correct, n_hallucinated::INTEGER AS n_hallucinated, n_not_known::INTEGER AS n_not_known,
       n_judge_failure::INTEGER AS n_judge_failure, cds_sys::DOUBLE AS cds_sys
     FROM (VALUES ${values.join(', ')}) t(run_id, config_id, sweep, encoder, magnetisation, cohesion, rho, delta_rho, n_correct, n_hallucinated, n_not_known, n_judge_failure, cds_sys))
     TO '${corpus}/order_params.parquet' (FORMAT parquet)`,
  );
  // Two annotators and the judge on 8 answers, 4 per prompt (Table 8 below works them out).
  const judge = 'c c h h c h h n'.split(' ');
  const a = 'c c h c c h h n'.split(' ');
  const b = 'c h h c c h n n'.split(' ');
  const full = { c: 'correct', h: 'hallucinated', n: 'not_known' } as Record<string, string>;
  const manifest = JSON.parse(readFileSync(join(corpus, 'manifest.json'), 'utf8'));
  writeFileSync(
    join(corpus, 'annotation.json'),
    JSON.stringify({
      format: 'panta-annotation/1',
      scored_at: '2026-01-01T00:00:00.000Z',
      fingerprint: manifest.fingerprint,
      raters: ['judge', 'ann', 'bob'],
      files: {},
      items: judge.map((_, i) => ({
        id: `a${i}`,
        run_id: String(runs[0].run_id),
        event: i,
        prompt_id: i < 4 ? 'fq117' : 'fq75',
        labels: { judge: full[judge[i]], ann: full[a[i]], bob: full[b[i]] },
      })),
      pairs: [],
    }),
  );
});

describe('the report draws the paper (numbers worked out by hand)', () => {
  it('Table 7: hallucination share = Σ hallucinated / Σ answers over every snapshot: fq117 10/16, fq75 3/16, pooled 13/32', async () => {
    const { html } = await defaultReport();
    const rows = sectionRows(html, 'hallucination-share');
    expect(rows).toEqual([
      ['0.5', '0.625', '0.188', '0.406'],
      ['all', '0.625', '0.188', '0.406'],
    ]);
    const csv = readFileSync(join(dir, 'report', 'tables', 'hallucination-share.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(csv[0]).toBe('T,fq117,fq75,pooled');
    expect(csv[1]).toBe('0.5,0.625,0.1875,0.40625');
  });

  it('Figure 5: 2 of 3 runs amplify (ρ final > ρ(0)); the run with ρ(0) undefined is left out and said so', async () => {
    const { html, out } = await defaultReport();
    const cap = figCaption(html, 'amplification');
    expect(cap).toMatch(/2 of 3 runs amplify/);
    expect(cap).toMatch(/1 run is left out: ρ undefined/);
    expect(cap).toMatch(/rose from t = 0 to the last sweep in 4 of 4 runs/);
    const pts = specValues(out, 'amplification').filter((v) => 'rho0' in v);
    expect(pts.map((p) => [p.rho0, p.rho_final, p.amplifies]).sort()).toEqual([
      [0.25, 2 / 3, true],
      [0.5, 1, true],
      [0.75, 0.25, false],
    ]);
  });

  it("Figure 6: per prompt and sweep, the mean over trials of the share and ± one standard deviation, the paper's spread (fq117 t = 0: 3/4 and 2/4 -> .625 ± .125·√2)", async () => {
    const { html, out } = await defaultReport();
    const v = specValues(out, 'hallucination-by-sweep');
    const at = (p: string, t: number) => v.find((x) => x.prompt_id === p && x.sweep === t)!;
    const sd = 0.125 * Math.SQRT2;
    expect(at('fq117', 0).share).toBeCloseTo(0.625, 12);
    expect(at('fq117', 0).lo).toBeCloseTo(0.625 - sd, 12);
    expect(at('fq117', 0).hi).toBeCloseTo(0.625 + sd, 12);
    // t = 1: 1/4 and 4/4: mean .625, sd = .375·√2
    expect(at('fq117', 1).lo).toBeCloseTo(0.625 - 0.375 * Math.SQRT2, 12);
    // fq75, t = 0: 1/4 and 0/4: sd .125·√2
    expect(at('fq75', 0).share).toBeCloseTo(0.125, 12);
    expect(at('fq75', 0).lo).toBeCloseTo(0.125 - sd, 12);
    // The widest band: fq117 at t = 1, sd .375·√2 = 53.0 percentage points
    expect(figCaption(html, 'hallucination-by-sweep')).toMatch(/The widest band: ± 53\.0 percentage points \(fq117, t = 1\), one sd/);
    // Truncation at k = 0 of 1 sweep saves half the agent calls; cohesion-accuracy: the ring's runs with ρ(0) defined
    expect(sectionRows(html, 'truncation').map((r) => r.slice(0, 3))).toEqual([['0', '50', '4']]);
    expect(sectionRows(html, 'cohesion-accuracy')[0].slice(0, 2)).toEqual(['ring', '3']);
    expect(figCaption(html, 'hallucination-by-sweep')).toMatch(
      /the band ± one standard deviation \(the sample sd, n − 1\) over trials \(no band with a single trial; the paper's spread; --spread se draws the standard error\)/,
    );
  });

  it("Figure 6 with --spread se: the band is ± one standard error (fq117 t = 0: .625 ± .125), and the caption says so; the spec's departures are a note", async () => {
    const copy = join(dir, 'departed');
    cpSync(corpus, copy, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(copy, 'manifest.json'), 'utf8'));
    manifest.spec.departures = ['Qwen3-14B in BF16, not 4-bit', 'two sweeps'];
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify(manifest));
    const r = await pantaInProcess(['report', copy, '--spread', 'se']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      "panta: note: Departures from the paper this sweep records (its spec's departures): Qwen3-14B in BF16, not 4-bit; two sweeps.\n",
    );
    const out = join(copy, 'report');
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect(html).toMatch(/Departures from the paper this sweep records/);
    const v = specValues(out, 'hallucination-by-sweep');
    const at = (p: string, t: number) => v.find((x) => x.prompt_id === p && x.sweep === t)!;
    expect(at('fq117', 0).lo).toBeCloseTo(0.5, 12);
    expect(at('fq117', 0).hi).toBeCloseTo(0.75, 12);
    expect(at('fq117', 1).lo).toBeCloseTo(0.25, 12);
    expect(at('fq117', 1).hi).toBeCloseTo(1, 12);
    expect(figCaption(html, 'hallucination-by-sweep')).toMatch(
      /± one standard error \(SE = sd\/√n, the sample sd\) over trials .*--spread se: the paper's is the standard deviation/,
    );
    expect(caption(html, 'truncation')).toMatch(/The spread is one se/);
    const bad = await pantaInProcess(['report', corpus, '--out', join(dir, 'bad-spread'), '--spread', 'iqr']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--spread.*iqr.*sd, se/);
    expect(existsSync(join(dir, 'bad-spread'))).toBe(false);
  });

  it('initial majority vs final fate: fq117 one repaired, fq75 one corrupted, each one other (tie, none)', async () => {
    const { html, out } = await defaultReport();
    expect(sectionRows(html, 'majority-fate')).toEqual([
      ['fq117', '2', '1', '0', '0', '0', '1'],
      ['fq75', '2', '0', '1', '0', '0', '1'],
      ['pooled', '4', '1', '1', '0', '0', '2'],
    ]);
    const grid = specValues(out, 'majority-fate-grid');
    const cell = (i: string, f: string) => grid.find((g) => g.initial === i && g.final === f)!.runs;
    expect([
      cell('hallucinated', 'correct'),
      cell('correct', 'hallucinated'),
      cell('tie', 'hallucinated'),
      cell('none', 'correct'),
    ]).toEqual([1, 1, 1, 1]);
    expect(grid.reduce((s, g) => s + (g.runs as number), 0)).toBe(4);
  });

  it('Table 9: final cohesion per encoder (e1 (.9+.5+.7+.3)/4 = .6, e2 .5), ρ final (.25 + 1 + 2/3 + 0)/4', async () => {
    const { html } = await defaultReport();
    expect(sectionRows(html, 'geometry-ladder')).toEqual([['ring', '2', '4', '0.600', '0.500', '0.479']]);
  });

  it('Table 10: Spearman over configuration-trial pairs: ranks (4,2,3,1) against (4,3,2,1), Σd² = 2, ρ_s = 1 − 6·2/(4·15) = 0.8', async () => {
    const { html } = await defaultReport();
    expect(sectionRows(html, 'encoder-robustness')).toEqual([['e1', 'e2', '4', '0.800']]);
  });

  it('Table 8: judge vs ann p_o 7/8, p_e 25/64, κ = 31/39; ann vs bob p_o 6/8, p_e 23/64, κ = 25/41', async () => {
    const { html } = await defaultReport();
    const rows = sectionRows(html, 'human-validation');
    const row = (pair: string, scope: string) => rows.find((r) => r[0] === pair && r[1] === scope)!;
    expect(row('judge vs ann', 'pooled').slice(2)).toEqual(['8', '87.500', (31 / 39).toFixed(3)]);
    expect(row('ann vs bob', 'pooled').slice(2)).toEqual(['8', '75', (25 / 41).toFixed(3)]);
    // fq75: judge and ann agree on all four (c h h n): κ = 1
    expect(row('judge vs ann', 'fq75').slice(2)).toEqual(['4', '100', '1']);
  });

  it('magnetisation and CDS bands are ± one standard error over trials (m final of fq117: .9 and .7 -> .8 ± .1; CDS .2 and .4 -> .3 ± .1)', async () => {
    const { html, out } = await defaultReport();
    const m = specValues(out, 'magnetisation-e1').find((v) => String(v.config_id).startsWith('fq117') && v.sweep === 1)!;
    expect(m.m).toBeCloseTo(0.8, 12);
    expect(m.m_lo).toBeCloseTo(0.7, 12);
    expect(m.m_hi).toBeCloseTo(0.9, 12);
    const c = specValues(out, 'cds-e2').find((v) => String(v.config_id).startsWith('fq75') && v.sweep === 1)!;
    expect(c.cds).toBeCloseTo(0.3, 12);
    expect(c.cds_lo).toBeCloseTo(0.2, 12);
    expect(c.cds_hi).toBeCloseTo(0.4, 12);
    expect(figCaption(html, 'magnetisation-e1')).toMatch(/mean ± one standard error over trials/);
  });

  it("--exclude-prompts fq117 is Table 9's scope (and the main text's pooled analyses), not Table 7's pooled column nor Table 10's pairs: each caption names its scope", async () => {
    const { html, out } = await report(['--exclude-prompts', 'fq117'], 'report-ex');
    // Table 7 pools every prompt, Prompt 1 included: 13/32 as without the option.
    expect(sectionRows(html, 'hallucination-share')[0]).toEqual(['0.5', '0.625', '0.188', '0.406']);
    expect(caption(html, 'hallucination-share')).toMatch(
      /Scope: the pooled column pools every prompt \(2\), as the paper's table does; --exclude-prompts \(fq117\) does not apply here/,
    );
    // Table 10: all configuration-trial pairs, n = 4, ρ_s = 0.8 as without the option.
    expect(sectionRows(html, 'encoder-robustness')).toEqual([['e1', 'e2', '4', '0.800']]);
    expect(caption(html, 'encoder-robustness')).toMatch(
      /Scope: the pairs of every prompt \(2\), as the paper's table does; --exclude-prompts \(fq117\) does not apply here/,
    );
    expect(figCaption(html, 'amplification')).toMatch(/1 of 1 runs amplify/);
    expect(sectionRows(html, 'majority-fate').at(-1)).toEqual(['pooled', '2', '0', '1', '0', '0', '1']);
    expect(sectionRows(html, 'geometry-ladder')).toEqual([['ring', '2', '2', '0.500', '0.300', '0.333']]);
    const t8 = sectionRows(html, 'human-validation');
    expect(t8.find((r) => r[0] === 'judge vs ann' && r[1] === 'pooled (without fq117)')!.slice(2)).toEqual(['4', '100', '1']);
    for (const id of ['majority-fate', 'geometry-ladder', 'human-validation'])
      expect(caption(html, id), id).toMatch(/excluded from .*: fq117 \(--exclude-prompts\)/);
    for (const id of ['amplification', 'majority-fate-grid'])
      expect(figCaption(html, id), id).toMatch(/excluded from this pooled analysis: fq117/);
    expect(specValues(out, 'amplification').some((v) => String(v.run_id ?? '').startsWith('fq117'))).toBe(false);
  });

  it("without --exclude-prompts, Table 9's caption says how to give the paper's scope (its Prompt 1 left out)", async () => {
    const { html } = await defaultReport();
    expect(caption(html, 'geometry-ladder')).toMatch(
      /Pooled over every prompt \(2\)\. The paper's Table 9 leaves out its Prompt 1 .*fq117 in rheon6.*--exclude-prompts ID/,
    );
    expect(caption(html, 'hallucination-share')).toMatch(/Scope: the pooled column pools every prompt \(2\), as the paper's table does\./);
  });

  /** A copy of the corpus whose spec has exclude_prompts: ids. */
  const withSpec = (ids: string[], name: string) => {
    const copy = join(dir, name);
    cpSync(corpus, copy, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(copy, 'manifest.json'), 'utf8'));
    manifest.spec.exclude_prompts = ids;
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify(manifest));
    return copy;
  };
  it("the spec's exclude_prompts is the default scope of Table 9 (named on its caption), --exclude-prompts '' overrides it", async () => {
    const copy = withSpec(['fq117'], 'spec-ex');
    const r = await pantaInProcess(['report', copy]);
    expect(r.stderr).toBe('');
    const html = readFileSync(join(copy, 'report', 'index.html'), 'utf8');
    expect(sectionRows(html, 'geometry-ladder')).toEqual([['ring', '2', '2', '0.500', '0.300', '0.333']]);
    expect(caption(html, 'geometry-ladder')).toMatch(/excluded from this pooled analysis: fq117 \(exclude_prompts in the spec\)/);
    expect(sectionRows(html, 'hallucination-share')[0]).toEqual(['0.5', '0.625', '0.188', '0.406']);
    expect((await pantaInProcess(['report', copy, '--exclude-prompts', ''])).code).toBe(0);
    const all = readFileSync(join(copy, 'report', 'index.html'), 'utf8');
    expect(sectionRows(all, 'geometry-ladder')).toEqual([['ring', '2', '4', '0.600', '0.500', '0.479']]);
  });

  it("an unknown id in the spec's exclude_prompts names the spec field (exit 2)", async () => {
    const bad = await pantaInProcess(['report', withSpec(['fq999'], 'spec-bad')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /manifest\.json: spec\.exclude_prompts: "fq999" is no prompt of this corpus; fix: use ids among fq117, fq75 \(or override it with --exclude-prompts\)\n$/,
    );
  });

  it('an unknown prompt to exclude is one line naming the option and the fix (exit 2), nothing written', async () => {
    const r = await pantaInProcess(['report', corpus, '--out', join(dir, 'bad'), '--exclude-prompts', 'fq999']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^panta: .*corpus: --exclude-prompts: "fq999" is no prompt of this corpus; fix: use ids among fq117, fq75\n$/);
    expect(existsSync(join(dir, 'bad'))).toBe(false);
  });
});

const CHROMIUM = '/usr/bin/chromium';
describe.skipIf(!existsSync(CHROMIUM))('the report in headless Chromium', () => {
  it("shows the paper's new tables and figures, nothing fetched from elsewhere", async () => {
    const { out } = await defaultReport();
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      const fetched: string[] = [];
      page.on('request', (r) => fetched.push(r.url()));
      await page.goto(pathToFileURL(join(out, 'index.html')).href);
      for (const id of ['amplification', 'hallucination-by-sweep', 'majority-fate-grid', 'cds-e1', 'cds-e2']) {
        const box = await page.locator(`section#${id} figure svg`).boundingBox();
        expect(box?.width, id).toBeGreaterThan(200);
      }
      for (const id of ['hallucination-share', 'majority-fate', 'human-validation', 'geometry-ladder', 'encoder-robustness'])
        expect(await page.locator(`section#${id} table tbody tr`).count(), id).toBeGreaterThan(0);
      expect(await page.locator('section#human-validation h3').textContent()).toMatch(/Table 8/);
      expect(fetched.filter((u) => !u.startsWith('file:'))).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});

describe('degenerate populations: one trial, every answer not known', () => {
  let one: string;
  beforeAll(async () => {
    one = join(dir, 'one');
    const spec = SPEC.replace('trials: 2', 'trials: 1').replace(/encoders: .*/, 'encoders: [{name: e1, kind: hashing, dim: 16}]');
    expect((await runSweep(writeSpec(dir, spec, 'one.yaml'), { out: one, logLevel: 'silent' })).status).toBe('complete');
    const runs = await queryRows(`SELECT run_id, config_id FROM read_parquet('${one}/runs.parquet')`);
    const values = runs.flatMap((r) =>
      [0, 1].map((t) => `('${r.run_id}', '${r.config_id}', ${t}, 'e1', 0.5, 0.2, NULL, NULL, 0, 0, 4, 0, 0.5)`),
    );
    await queryRows(
      `COPY (SELECT run_id, config_id, sweep::INTEGER AS sweep, encoder, magnetisation::DOUBLE AS magnetisation, cohesion::DOUBLE AS cohesion, rho::DOUBLE AS rho,
         delta_rho::DOUBLE AS delta_rho, n_correct::INTEGER AS n_correct, n_hallucinated::INTEGER AS n_hallucinated, n_not_known::INTEGER AS n_not_known,
         n_judge_failure::INTEGER AS n_judge_failure, cds_sys::DOUBLE AS cds_sys
       FROM (VALUES ${values.join(', ')}) t(run_id, config_id, sweep, encoder, magnetisation, cohesion, rho, delta_rho, n_correct, n_hallucinated, n_not_known, n_judge_failure, cds_sys))
       TO '${one}/order_params.parquet' (FORMAT parquet)`,
    );
  });

  it('every number is defined or said to be undefined: no NaN, no band, no amplification count, no pair to correlate', async () => {
    const r = await pantaInProcess(['report', one]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const html = readFileSync(join(one, 'report', 'index.html'), 'utf8');
    expect(html).not.toMatch(/NaN|Infinity|>undefined</);
    expect(sectionRows(html, 'hallucination-share')[0]).toEqual(['0.5', '0', '0', '0']);
    expect(sectionRows(html, 'majority-fate').at(-1)).toEqual(['pooled', '2', '0', '0', '0', '0', '2']);
    expect(figCaption(html, 'amplification')).toMatch(/no run has ρ defined at both ends\. 2 runs are left out/);
    expect(figCaption(html, 'magnetisation-e1')).toMatch(
      /every configuration has a single trial, so there is no standard error and no band is drawn/,
    );
    expect(html).toMatch(/The sweep has one encoder \(e1\): there is no pair to correlate/);
    const m = specValues(join(one, 'report'), 'magnetisation-e1');
    expect(m.every((v) => v.m_lo === null && v.m_hi === null)).toBe(true);
    const f6 = specValues(join(one, 'report'), 'hallucination-by-sweep');
    expect(f6.every((v) => v.share === 0 && v.lo === null)).toBe(true);
  });
});
