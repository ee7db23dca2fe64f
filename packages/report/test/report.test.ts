import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import { beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { averageRanks, spearman, writeReport, type ReportResult } from '@panta/report';
import { RHEON6, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { expectCatalogued } from './catalogued.js';

const GEOMETRIES = ['ring', 'torus2d', 'meanfield'];
const TEMPERATURES = [0.2, 0.8, 1.4];
const ENCODERS = ['h384', 'h16'];

const SPEC = `name: report
dataset: ${RHEON6}
prompts: [fq117]
geometries: [${GEOMETRIES.join(', ')}]
sizes: [16]
temperatures: [${TEMPERATURES.join(', ')}]
trials: 2
sweeps: 3
seed: 11
backend: {kind: surrogate}
encoders: [{name: h384, kind: hashing, dim: 384}, {name: h16, kind: hashing, dim: 16}]
judge: {kind: reference}
`;

let dir: string;
let corpus: string;
let report: string;
let html: string;
const op = () => `read_parquet('${corpus}/order_params.parquet')`;

let stdout: string;

beforeAll(async () => {
  dir = tempDir();
  corpus = join(dir, 'corpus');
  // The sweep is the fixture: run in this process. The report is made once, by the binary, in a folder --out names
  // (the default place, <corpus>/report, is what the incomplete corpus's report below is read from).
  expect((await runSweep(writeSpec(dir, SPEC), { out: corpus, logLevel: 'silent' })).status).toBe('complete');
  report = join(dir, 'elsewhere');
  const r = panta(['report', corpus, '--out', report]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  stdout = r.stdout;
  html = readFileSync(join(report, 'index.html'), 'utf8');
});

const svgOf = (id: string) => readFileSync(join(report, 'figures', `${id}.svg`), 'utf8');
const specData = (id: string) =>
  (JSON.parse(readFileSync(join(report, 'figures', `${id}.vl.json`), 'utf8')) as { data: { values: Record<string, unknown>[] } }).data
    .values;

/** The rows of one HTML table of index.html, cells as text. */
function htmlTable(id: string): string[][] {
  const section = new RegExp(`<section id="${id}">([\\s\\S]*?)</section>`).exec(html)?.[1];
  expect(section, `section ${id}`).toBeDefined();
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(section!)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((tr) => [...tr[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((td) => td[1]));
}

/** Final sweep of each run, per encoder, straight from order_params.parquet. */
const FINAL = () => `SELECT * FROM ${op()} QUALIFY sweep = max(sweep) OVER (PARTITION BY run_id, encoder)`;

describe('panta report', () => {
  it('writes only figures and tables the catalog names, each named once (one per encoder where it says so)', () => {
    const stems = (sub: string, ext: RegExp) =>
      readdirSync(join(report, sub))
        .filter((f) => ext.test(f))
        .map((f) => f.replace(ext, ''));
    const written = { figures: stems('figures', /\.svg$/), tables: stems('tables', /\.csv$/) };
    expect(written.figures).toHaveLength(16);
    expect(written.tables).toHaveLength(10);
    expectCatalogued(written, ENCODERS);
  });

  it('writes every figure as SVG that parses and PNG that is a real picture', () => {
    const ids = [
      ...ENCODERS.flatMap((e) => [`magnetisation-${e}`, `cohesion-${e}`]),
      'rho',
      'delta-rho',
      ...ENCODERS.map((e) => `phase-space-${e}`),
      ...ENCODERS.map((e) => `cds-${e}`),
      'amplification',
      'hallucination-by-sweep',
      'majority-fate-grid',
      ...ENCODERS.map((e) => `binder-${e}`),
      'phase-diagram',
    ];
    expect(
      readdirSync(join(report, 'figures'))
        .filter((f) => f.endsWith('.png'))
        .sort(),
    ).toEqual(ids.map((i) => `${i}.png`).sort());
    for (const id of ids) {
      const svg = svgOf(id);
      expect(svg).toMatch(/^<svg [^>]*width="\d+" height="\d+"/);
      const parsed = new Resvg(svg); // throws on malformed SVG
      expect(parsed.width).toBeGreaterThan(300);
      const png = readFileSync(join(report, 'figures', `${id}.png`));
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(png.length).toBeGreaterThan(10_000);
      // IHDR: the PNG is the SVG at twice the size
      expect(png.readUInt32BE(16)).toBe(Math.round(parsed.width * 2));
      expect(png.readUInt32BE(20)).toBe(Math.round(parsed.height * 2));
      expect(existsSync(join(report, 'figures', `${id}.vl.json`))).toBe(true);
    }
  });

  it('ordering figures: one line per temperature in each geometry panel, at the trial means of order_params', async () => {
    for (const e of ENCODERS) {
      const svg = svgOf(`magnetisation-${e}`);
      const lines = svg.match(/<g class="mark-line role-mark/g) ?? [];
      expect(lines.length).toBe(GEOMETRIES.length * TEMPERATURES.length);
      // one legend entry and one stroke colour per temperature
      expect((svg.match(/class="mark-symbol role-legend-symbol/g) ?? []).length).toBe(TEMPERATURES.length);
      const strokes = new Set([...svg.matchAll(/<g class="mark-line role-mark[^>]*>\s*<path [^>]*stroke="([^"]+)"/g)].map((m) => m[1]));
      expect(strokes.size).toBe(TEMPERATURES.length);
      for (const g of GEOMETRIES) expect(svg).toContain(`>${g}</text>`);

      // the band: mean ± one standard error over trials (sample sd / √n)
      const expected = await queryRows(
        `SELECT config_id, sweep, avg(magnetisation) AS m, avg(magnetisation) - stddev_samp(magnetisation) / sqrt(count(*)) AS lo,
           avg(magnetisation) + stddev_samp(magnetisation) / sqrt(count(*)) AS hi, count(*) AS trials FROM ${op()} WHERE encoder = '${e}' GROUP BY ALL ORDER BY ALL`,
      );
      const drawn = specData(`magnetisation-${e}`);
      expect(drawn).toHaveLength(GEOMETRIES.length * TEMPERATURES.length * 4);
      expect(new Set(drawn.map((d) => d.temperature)).size).toBe(TEMPERATURES.length);
      for (const x of expected) {
        const d = drawn.find((v) => v.config_id === x.config_id && v.sweep === x.sweep)!;
        expect(d.m as number).toBeCloseTo(x.m as number, 12);
        expect(d.m_lo as number).toBeCloseTo(x.lo as number, 12);
        expect(d.m_hi as number).toBeCloseTo(x.hi as number, 12);
        expect(d.trials).toBe(2);
      }
    }
    const q = specData('cohesion-h16');
    const [qExpected] = await queryRows(
      `SELECT avg(cohesion) AS q FROM ${op()} WHERE encoder = 'h16' AND config_id = 'fq117-torus2d-n16-T0.8-glauber' AND sweep = 2`,
    );
    expect(q.find((d) => d.config_id === 'fq117-torus2d-n16-T0.8-glauber' && d.sweep === 2)!.q as number).toBeCloseTo(
      qExpected!.q as number,
      12,
    );
  });

  it('rho and delta_rho: the best temperature of each geometry is the one with the lowest final delta_rho', async () => {
    expect((svgOf('rho').match(/<g class="mark-line role-mark/g) ?? []).length).toBe(GEOMETRIES.length * TEMPERATURES.length);
    const finals = await queryRows(
      `SELECT r.geometry, r.temperature, avg(f.delta_rho) AS d FROM (${FINAL()}) f JOIN read_parquet('${corpus}/runs.parquet') r USING (run_id)
       WHERE f.encoder = 'h384' GROUP BY ALL ORDER BY r.geometry, d, r.temperature`,
    );
    const drawn = specData('delta-rho');
    expect(drawn).toHaveLength(GEOMETRIES.length * TEMPERATURES.length);
    for (const g of GEOMETRIES) {
      const best = finals.find((f) => f.geometry === g)!;
      const marked = drawn.filter((d) => d.geometry === g && d.best);
      expect(marked).toHaveLength(1);
      expect(marked[0].temperature).toBe(best.temperature);
      expect(marked[0].delta_rho as number).toBeCloseTo(best.d as number, 12);
    }
    // one diamond per geometry panel
    expect((svgOf('delta-rho').match(/<g class="mark-symbol role-mark child_layer_3_marks/g) ?? []).length).toBe(GEOMETRIES.length);
    expect(html).toMatch(/Δρ = ρ\(final sweep\) − ρ\(0\) \(docs\/DESIGN\.md#order-parameters/);
  });

  it('phase space draws one cohesion-against-rho trajectory per configuration', () => {
    const svg = svgOf('phase-space-h384');
    expect((svg.match(/<g class="mark-line role-mark/g) ?? []).length).toBe(GEOMETRIES.length * TEMPERATURES.length);
    const drawn = specData('phase-space-h384');
    expect(new Set(drawn.map((d) => d.config_id)).size).toBe(GEOMETRIES.length * TEMPERATURES.length);
    expect(drawn.every((d) => typeof d.rho === 'number' && typeof d.q === 'number')).toBe(true);
    // As the paper's Figure 11: cohesion on x, ρ on y ("right and down" = cohesion rising as hallucination falls).
    const spec = JSON.parse(readFileSync(join(report, 'figures', 'phase-space-h384.vl.json'), 'utf8')) as {
      spec: { layer: { encoding: { x: { field: string }; y: { field: string } } }[] };
    };
    for (const l of spec.spec.layer) expect([l.encoding.x.field, l.encoding.y.field]).toEqual(['q', 'rho']);
    expect(html).toMatch(/moving right and down is cohesion rising as hallucination falls/);
  });

  it('geometry ladder: one row per geometry, final cohesion per encoder as order_params gives it', async () => {
    const rows = htmlTable('geometry-ladder');
    expect(rows.map((r) => r[0])).toEqual(GEOMETRIES); // rising k: 2, 4, 15
    const expected = await queryRows(
      `SELECT r.geometry, f.encoder, avg(f.cohesion) AS q FROM (${FINAL()}) f JOIN read_parquet('${corpus}/runs.parquet') r USING (run_id) GROUP BY ALL`,
    );
    const csv = readFileSync(join(report, 'tables', 'geometry-ladder.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(csv[0]).toBe('geometry,k,runs,q final (h384),q final (h16),ρ final');
    for (const [i, g] of GEOMETRIES.entries()) {
      const cells = csv[i + 1].split(',');
      expect(cells[0]).toBe(g);
      expect(cells[2]).toBe('6');
      ENCODERS.forEach((e, j) => {
        const q = expected.find((x) => x.geometry === g && x.encoder === e)!.q as number;
        expect(Number(cells[3 + j])).toBeCloseTo(q, 12);
        expect(rows[i][3 + j]).toBe(q.toFixed(3));
      });
    }
  });

  it('encoder robustness: Spearman of final cohesion between the two encoders over configuration-trial pairs, recomputed in DuckDB', async () => {
    const rows = htmlTable('encoder-robustness');
    expect(rows).toHaveLength(1);
    expect(rows[0].slice(0, 3)).toEqual(['h384', 'h16', String(GEOMETRIES.length * TEMPERATURES.length * 2)]);
    const shown = Number(
      readFileSync(join(report, 'tables', 'encoder-robustness.csv'), 'utf8')
        .trim()
        .split('\n')[1]
        .split(',')[3],
    );
    expect(shown).toBeGreaterThanOrEqual(-1);
    expect(shown).toBeLessThanOrEqual(1);
    // Spearman = Pearson of average ranks: rank() plus half the ties beyond the first
    const [{ rs }] = (await queryRows(
      `WITH f AS (SELECT run_id, encoder, cohesion AS q FROM (${FINAL()})),
       r AS (SELECT run_id, encoder, rank() OVER (PARTITION BY encoder ORDER BY q) + (count(*) OVER (PARTITION BY encoder, q) - 1) / 2.0 AS rk FROM f)
       SELECT corr(a.rk, b.rk) AS rs FROM r a JOIN r b USING (run_id) WHERE a.encoder = 'h384' AND b.encoder = 'h16'`,
    )) as [{ rs: number }];
    expect(shown).toBeCloseTo(rs, 12);
    expect(rows[0][3]).toBe(rs.toFixed(3));
  });

  it('drift and cost tables carry runs.parquet, and early stopping is said to be off', async () => {
    const drift = htmlTable('drift');
    expect(drift).toHaveLength(GEOMETRIES.length * TEMPERATURES.length);
    const [focus] = await queryRows(
      `SELECT avg(focus_total) AS f, count(drift_onset) AS drifted FROM read_parquet('${corpus}/runs.parquet') WHERE geometry = 'ring' AND temperature = 0.8`,
    );
    const ring = drift.find((r) => r[1] === 'ring' && r[2] === '0.8')!;
    // The HTML shows an integer (a mean FOCUS of exactly 0 is common: accuracy moves in steps of 1/N) without decimals.
    const f = focus!.f as number;
    expect(ring[4]).toBe(Number.isInteger(f) ? String(f) : f.toFixed(3));
    expect(ring[5]).toBe(String(focus!.drifted));
    const cost = htmlTable('cost');
    expect(cost.map((r) => r[0])).toEqual([...GEOMETRIES, 'total']);
    const [sums] = await queryRows(
      `SELECT sum(calls) AS calls, sum(prompt_tokens) AS pt, count(*) AS runs FROM read_parquet('${corpus}/runs.parquet')`,
    );
    const total = cost.at(-1)!;
    expect(total[1]).toBe(`${sums!.runs}/${sums!.runs}`);
    expect(total[3]).toBe((sums!.calls as number).toLocaleString('en-US'));
    expect(total[4]).toBe('0'); // glauber makes no extra calls
    expect(total[6]).toBe((sums!.pt as number).toLocaleString('en-US'));
    expect(total[8]).toBe('n/a'); // the surrogate has no price table
    expect(cost.every((r) => r.length === 10)).toBe(true); // no early-stopping columns
    expect(html).toContain('Early stopping was off (no early_stopping in the spec): every run made all 3 sweeps.');
    expect(html).not.toContain('id="early-stopping"');
  });

  it('index.html is self-contained: inline SVG and CSS, no script, no stylesheet link, no URL', () => {
    expect((html.match(/<svg\b/g) ?? []).length).toBe(16);
    expect(html).toMatch(/<style>[\s\S]+<\/style>/);
    expect(html).not.toMatch(/<script\b/i);
    expect(html).not.toMatch(/<link\b/i);
    expect(html).not.toMatch(/@import|url\(/i);
    expect(html).not.toMatch(/https?:\/\//i);
    for (const href of html.matchAll(/href="([^"]*)"/g)) {
      const target = href[1];
      if (!target.startsWith('#')) expect(existsSync(join(report, target)), target).toBe(true);
    }
  });

  it('--out puts the report elsewhere and leaves the corpus alone', () => {
    expect(stdout).toMatch(/^report: .*elsewhere\/index\.html \(16 figures as SVG and PNG in .*, 10 tables\)$/m);
    expect(existsSync(join(report, 'index.html'))).toBe(true);
    expect(readdirSync(join(report, 'figures'))).toHaveLength(48);
    expect(existsSync(join(corpus, 'report'))).toBe(false);
  });

  it('an incomplete corpus (status running, a run missing) still reports the complete runs, with a visible note', () => {
    const partial = join(dir, 'partial');
    cpSync(corpus, partial, { recursive: true });
    for (const f of ['order_params.parquet', 'runs.parquet', 'whitening', 'events/fq117-ring-n16-T0.2-glauber-t0.parquet'])
      rmSync(join(partial, f), { recursive: true });
    const manifest = JSON.parse(readFileSync(join(partial, 'manifest.json'), 'utf8')) as { status: string };
    writeFileSync(join(partial, 'manifest.json'), JSON.stringify({ ...manifest, status: 'running' }));
    const r = panta(['report', partial]);
    expect(r.code).toBe(0);
    // Without --out, the report goes in the corpus folder.
    expect(r.stdout).toMatch(/^report: .*partial\/report\/index\.html \(16 figures as SVG and PNG in .*, 10 tables\)$/m);
    expect(r.stderr).toMatch(/note: This corpus is incomplete \(status running\): 17 of 18 runs are complete/);
    const page = readFileSync(join(partial, 'report', 'index.html'), 'utf8');
    expect(page).toMatch(/<p class="note">This corpus is incomplete \(status running\): 17 of 18 runs are complete/);
    const drawn = JSON.parse(readFileSync(join(partial, 'report', 'figures', 'magnetisation-h384.vl.json'), 'utf8')) as {
      data: { values: { config_id: string; trials: number }[] };
    };
    expect(drawn.data.values.filter((v) => v.config_id === 'fq117-ring-n16-T0.2-glauber').every((v) => v.trials === 1)).toBe(true);
    expect(existsSync(join(partial, 'order_params.parquet'))).toBe(false); // reading never writes the corpus
  });

  it('a folder that is not a corpus: one line naming it, the problem and the fix, exit 2, nothing written', () => {
    const empty = tempDir();
    const r = panta(['report', empty]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `panta: ${join(empty, 'manifest.json')}: missing: this folder is not a Panta corpus; fix: give the folder a sweep wrote (the --out of \`panta run\`)`,
    );
    expect(readdirSync(empty)).toEqual([]);
    expect(r.stdout).toBe('');

    const missing = join(empty, 'nowhere');
    const m = panta(['report', missing]);
    expect(m.code).toBe(2);
    expect(m.stderr.trim()).toBe(`panta: ${missing}: no such folder; fix: give the folder a sweep wrote (the --out of \`panta run\`)`);
    expect(existsSync(missing)).toBe(false);
  });
});

/** A sweep run in this process (faster than spawning `panta`) and its report. */
async function sweepAndReport(yaml: string): Promise<{ corpus: string; result: ReportResult; page: string }> {
  const d = tempDir();
  const out = join(d, 'corpus');
  const summary = await runSweep(writeSpec(d, yaml), { out, logLevel: 'silent' });
  expect(summary.status).toBe('complete');
  const result = await writeReport(out);
  return { corpus: out, result, page: readFileSync(result.index, 'utf8') };
}

/** The body rows of one HTML table of a report page, cells as text. */
function pageTable(page: string, id: string): string[][] {
  const section = new RegExp(`<section id="${id}">([\\s\\S]*?)</section>`).exec(page)?.[1];
  expect(section, `section ${id}`).toBeDefined();
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(section!)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((tr) => [...tr[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((td) => td[1]));
}

/** A CSV the report wrote, as header and rows keyed by column (RFC 4180 quotes: headers hold commas). */
function readCsv(result: ReportResult, id: string): { header: string[]; rows: Record<string, string>[] } {
  const text = readFileSync(join(result.out, 'tables', `${id}.csv`), 'utf8');
  const lines = text
    .trim()
    .split('\n')
    .map((line) =>
      [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].map((m) => m[1].replace(/^"(.*)"$/, '$1').replaceAll('""', '"')).slice(0, -1),
    );
  const header = lines[0];
  return { header, rows: lines.slice(1).map((cells) => Object.fromEntries(header.map((h, i) => [h, cells[i]]))) };
}

/** Every figure of a report: SVG that parses, PNG twice its size. */
function expectFiguresRender(result: ReportResult): void {
  expect(result.figures.length).toBeGreaterThan(0);
  for (const f of result.figures) {
    const parsed = new Resvg(readFileSync(f.svg, 'utf8'));
    const png = readFileSync(f.png);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.readUInt32BE(16)).toBe(Math.round(parsed.width * 2));
  }
}

describe('report of an early-stopped sweep', () => {
  const SPEC_ES = `name: es
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, meanfield]
sizes: [32]
temperatures: [0.1, 1.3]
trials: 2
sweeps: 8
seed: 3
backend: {kind: surrogate}
encoders: [{name: hashing, kind: hashing, dim: 64}]
judge: {kind: reference}
early_stopping: {}
`;
  let es: Awaited<ReturnType<typeof sweepAndReport>>;
  const runsPq = () => `read_parquet('${es.corpus}/runs.parquet')`;

  beforeAll(async () => {
    es = await sweepAndReport(SPEC_ES);
  });

  it('cost table: calls saved per geometry and in total are sum(calls_saved) of runs.parquet; the note gives the share', async () => {
    const sums = await queryRows(
      `SELECT coalesce(geometry, 'total') AS geometry, sum(calls_saved) AS saved, sum(calls) AS calls, count(*) FILTER (WHERE stopped_early) AS stopped,
         avg(sweeps_run) AS last, count(*) AS runs, count(*) FILTER (WHERE calls_saved <> (8 - sweeps_run) * n) AS bad
       FROM ${runsPq()} GROUP BY ROLLUP (geometry)`,
    );
    const total = sums.find((x) => x.geometry === 'total')!;
    // the corpus must hold both kinds of run, or the numbers below could not tell a wrong sum from a right one
    expect(total.stopped as number).toBeGreaterThan(0);
    expect(total.stopped as number).toBeLessThan(total.runs as number);
    expect(total.bad).toBe(0);
    const { header, rows } = readCsv(es.result, 'cost');
    expect(header.slice(-3)).toEqual(['runs stopped early', 'calls saved by early stopping', 'calls saved (%)']);
    expect(rows.map((r) => r.geometry)).toEqual(['ring', 'meanfield', 'total']);
    for (const row of rows) {
      const x = sums.find((s) => s.geometry === row.geometry)!;
      expect(Number(row['calls saved by early stopping'])).toBe(x.saved);
      expect(Number(row['calls saved (%)'])).toBeCloseTo((100 * (x.saved as number)) / ((x.saved as number) + (x.calls as number)), 10);
      expect(Number(row['runs stopped early'])).toBe(x.stopped);
      expect(Number(row.calls)).toBe(x.calls);
    }
    const pct = (100 * (total.saved as number)) / ((total.saved as number) + (total.calls as number));
    expect(es.page).toContain(
      `Early stopping: ${total.stopped} of ${total.runs} runs stopped early, mean last sweep ${(total.last as number).toFixed(1)} of 8; calls saved: ${pct.toFixed(1)}% of the calls full runs would make`,
    );
    const shown = pageTable(es.page, 'cost').at(-1)!;
    expect(shown.slice(-3)).toEqual([String(total.stopped), (total.saved as number).toLocaleString('en-US'), pct.toFixed(3)]);
  });

  it('early-stopping table: runs, stops, mean last sweep and calls saved per configuration', async () => {
    const expected = await queryRows(
      `SELECT config_id, count(*) AS runs, count(*) FILTER (WHERE stopped_early) AS stopped, avg(sweeps_run) AS last,
         100 * sum(calls_saved) / (sum(calls) + sum(calls_saved)) AS pct FROM ${runsPq()} GROUP BY ALL`,
    );
    const { header, rows } = readCsv(es.result, 'early-stopping');
    expect(header).toEqual(['prompt', 'geometry', 'N', 'T', 'runs', 'stopped early', 'mean last sweep', 'calls saved (%)']);
    expect(rows).toHaveLength(8);
    for (const row of rows) {
      const x = expected.find((e) => e.config_id === `${row.prompt}-${row.geometry}-n${row.N}-T${row.T}-glauber`)!;
      expect(Number(row.runs)).toBe(x.runs);
      expect(Number(row['stopped early'])).toBe(x.stopped);
      expect(Number(row['mean last sweep'])).toBeCloseTo(x.last as number, 12);
      expect(Number(row['calls saved (%)'])).toBeCloseTo(x.pct as number, 10);
    }
  });

  it('curves: a run that stopped early counts with its last value at later sweeps; every figure still renders', async () => {
    // each run's rho at min(t, its last sweep), for t up to the last sweep of its configuration's longest run
    const expected = await queryRows(
      `WITH op AS (SELECT * FROM read_parquet('${es.corpus}/order_params.parquet')),
         last AS (SELECT run_id, config_id, max(sweep) AS last FROM op GROUP BY ALL),
         grid AS (SELECT run_id, config_id, last, unnest(generate_series(0, max(last) OVER (PARTITION BY config_id))) AS t FROM last)
       SELECT g.config_id, g.t AS sweep, avg(op.rho) AS rho, avg(op.rho) - stddev_samp(op.rho) / sqrt(count(op.rho)) AS lo,
         avg(op.rho) + stddev_samp(op.rho) / sqrt(count(op.rho)) AS hi, count(*) AS trials, count(*) FILTER (WHERE g.t > g.last) AS held
       FROM grid g JOIN op ON op.run_id = g.run_id AND op.sweep = least(g.t, g.last) GROUP BY ALL`,
    );
    expect(expected.some((x) => (x.held as number) > 0)).toBe(true);
    const drawn = (
      JSON.parse(readFileSync(join(es.result.out, 'figures', 'rho.vl.json'), 'utf8')) as {
        data: { values: Record<string, number | string>[] };
      }
    ).data.values;
    expect(drawn).toHaveLength(expected.length);
    for (const x of expected) {
      const d = drawn.find((v) => v.config_id === x.config_id && v.sweep === x.sweep)!;
      expect(d.trials).toBe(2);
      expect(d.held).toBe(x.held);
      expect(d.rho as number).toBeCloseTo(x.rho as number, 12);
      if (x.lo === null) expect(d.rho_lo).toBeNull();
      else expect(d.rho_lo as number).toBeCloseTo(x.lo as number, 12);
      if (x.hi === null) expect(d.rho_hi).toBeNull();
      else expect(d.rho_hi as number).toBeCloseTo(x.hi as number, 12);
    }
    expect(es.page).toContain('such a run counts in the mean and band with its last value (carried forward');
    expectFiguresRender(es.result);
    expect((readFileSync(join(es.result.out, 'figures', 'rho.svg'), 'utf8').match(/<g class="mark-line role-mark/g) ?? []).length).toBe(8);
  });
});

describe('report of a sweep that grids the protocol', () => {
  const PROTOCOLS = ['isolated', 'glauber', 'ssvp', 'belief-board', 'drift-policy'];
  const SPEC_PROTOCOLS = `name: protocols
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring, meanfield]
sizes: [16]
temperatures: [0.3, 0.9]
trials: 2
sweeps: 3
seed: 11
protocol: [${PROTOCOLS.join(', ')}]
backend: {kind: surrogate}
encoders: [{name: hashing, kind: hashing, dim: 64}]
judge: {kind: reference}
`;
  let pr: Awaited<ReturnType<typeof sweepAndReport>>;
  const FINAL_RHO = () =>
    `SELECT run_id, rho FROM read_parquet('${pr.corpus}/order_params.parquet') QUALIFY sweep = max(sweep) OVER (PARTITION BY run_id)`;

  beforeAll(async () => {
    pr = await sweepAndReport(SPEC_PROTOCOLS);
  });

  it("protocol arms are never pooled: Table 7, Tables 9 and 10, the fate table and Figure 5 have a block or panel per protocol, each arm's share as DuckDB counts it", async () => {
    const share = pageTable(pr.page, 'hallucination-share');
    // per arm: one row per temperature and an 'all' row
    expect(share).toHaveLength(PROTOCOLS.length * 3);
    expect(share.map((r) => r[0])).toEqual(PROTOCOLS.flatMap((p) => [p, p, p]));
    const expected = await queryRows(
      `SELECT r.protocol, sum(o.n_hallucinated) / sum(o.n_correct + o.n_hallucinated + o.n_not_known + o.n_judge_failure) AS s
       FROM read_parquet('${pr.corpus}/order_params.parquet') o JOIN read_parquet('${pr.corpus}/runs.parquet') r USING (run_id)
       WHERE o.encoder = 'hashing' GROUP BY ALL`,
    );
    for (const p of PROTOCOLS) {
      const all = share.find((r) => r[0] === p && r[1] === 'all')!;
      expect(all[3]).toBe((expected.find((e) => e.protocol === p)!.s as number).toFixed(3));
    }
    expect(pageTable(pr.page, 'geometry-ladder').map((r) => r[0])).toEqual(PROTOCOLS.flatMap((p) => [p, p]));
    expect(pageTable(pr.page, 'encoder-robustness')).toHaveLength(0); // one encoder
    expect(
      pageTable(pr.page, 'majority-fate')
        .filter((r) => r[1] === 'pooled')
        .map((r) => r[0]),
    ).toEqual(PROTOCOLS);
    const amp = JSON.parse(readFileSync(join(pr.result.out, 'figures', 'amplification.vl.json'), 'utf8'));
    expect(amp.facet.column.sort).toEqual(PROTOCOLS);
    expect(pr.page).toMatch(/Arms \(protocol\) are never pooled/);
  });

  it('coordination protocols table: calls by role and tokens as the event rows count them, final rho as order_params gives it', async () => {
    const counts = await queryRows(
      `SELECT geometry, protocol, count(*) FILTER (WHERE role = 'agent') AS agent, count(*) FILTER (WHERE role = 'summary') AS summary, count(*) FILTER (WHERE role = 'merge') AS merge,
         count(*) FILTER (WHERE role = 'judge') AS judge, count(*) FILTER (WHERE role = 'moderator') AS moderator,
         sum(prompt_tokens + completion_tokens) FILTER (WHERE role = 'agent') AS agent_tokens, sum(prompt_tokens + completion_tokens) AS tokens
       FROM read_parquet('${pr.corpus}/events/*.parquet') GROUP BY ALL`,
    );
    const rho = await queryRows(
      `WITH f AS (SELECT r.geometry, r.protocol, r.config_id, f.rho FROM (${FINAL_RHO()}) f JOIN read_parquet('${pr.corpus}/runs.parquet') r USING (run_id)),
         spread AS (SELECT geometry, protocol, config_id, max(rho) - min(rho) AS s FROM f GROUP BY ALL)
       SELECT geometry, protocol, (SELECT avg(rho) FROM f WHERE f.geometry = a.geometry AND f.protocol = a.protocol) AS rho, avg(s) AS spread FROM spread a GROUP BY ALL`,
    );
    const extras = await queryRows(
      `SELECT protocol, sum(extra_calls) AS extra FROM read_parquet('${pr.corpus}/runs.parquet') GROUP BY ALL`,
    );
    // the protocols must have made extra calls of two roles, or the comparison below could not fail
    expect(counts.reduce((s, c) => s + (c.merge as number), 0)).toBeGreaterThan(0);
    expect(counts.reduce((s, c) => s + (c.judge as number), 0)).toBeGreaterThan(0);

    const { header, rows } = readCsv(pr.result, 'protocols');
    expect(header).toEqual([
      'geometry',
      'protocol',
      'runs',
      'm final (hashing)',
      'm trial spread',
      'ρ final',
      'ρ trial spread',
      'agent calls',
      'summary calls',
      'merge calls',
      'judge calls',
      'moderator calls',
      'tokens / agent call',
      'tokens / agent call, all roles',
    ]);
    expect(rows.map((r) => `${r.geometry}/${r.protocol}`)).toEqual(['ring', 'meanfield'].flatMap((g) => PROTOCOLS.map((p) => `${g}/${p}`)));
    for (const row of rows) {
      const c = counts.find((x) => x.geometry === row.geometry && x.protocol === row.protocol)!;
      const r = rho.find((x) => x.geometry === row.geometry && x.protocol === row.protocol)!;
      expect(Number(row.runs)).toBe(4);
      for (const role of ['agent', 'summary', 'merge', 'judge', 'moderator'])
        expect(Number(row[`${role} calls`]), `${row.geometry} ${row.protocol} ${role}`).toBe(c[role]);
      expect(Number(row['tokens / agent call'])).toBeCloseTo((c.agent_tokens as number) / (c.agent as number), 10);
      expect(Number(row['tokens / agent call, all roles'])).toBeCloseTo((c.tokens as number) / (c.agent as number), 10);
      expect(Number(row['ρ final'])).toBeCloseTo(r.rho as number, 12);
      expect(Number(row['ρ trial spread'])).toBeCloseTo(r.spread as number, 12);
    }
    // the table's extra calls add up to runs.parquet's extra_calls per protocol
    for (const p of PROTOCOLS) {
      const shown = rows
        .filter((r) => r.protocol === p)
        .reduce(
          (s, r) => s + Number(r['summary calls']) + Number(r['merge calls']) + Number(r['judge calls']) + Number(r['moderator calls']),
          0,
        );
      expect(shown).toBe(extras.find((x) => x.protocol === p)!.extra);
    }
    expect(pageTable(pr.page, 'protocols')).toHaveLength(10);
  });

  it('final rho figure: a point per run at its final rho, a tick per panel at their mean; panels in spec order', async () => {
    const finals = new Map((await queryRows(FINAL_RHO())).map((r) => [r.run_id as string, r.rho as number]));
    const drawn = (
      JSON.parse(readFileSync(join(pr.result.out, 'figures', 'protocols-rho.vl.json'), 'utf8')) as {
        data: { values: Record<string, unknown>[] };
      }
    ).data.values;
    const points = drawn.filter((d) => d.kind === 'run');
    expect(points).toHaveLength(40);
    for (const p of points) expect(p.rho as number).toBeCloseTo(finals.get(p.run_id as string)!, 12);
    const ticks = drawn.filter((d) => d.kind === 'mean');
    expect(ticks).toHaveLength(10);
    for (const t of ticks) {
      const mine = points.filter((p) => p.geometry === t.geometry && p.protocol === t.protocol).map((p) => p.rho as number);
      expect(mine).toHaveLength(4);
      expect(t.rho as number).toBeCloseTo(mine.reduce((a, b) => a + b, 0) / 4, 12);
    }
    const svg = readFileSync(join(pr.result.out, 'figures', 'protocols-rho.svg'), 'utf8');
    // one panel per geometry (one prompt, one size): its ticks (rects) and its points
    expect((svg.match(/<g class="mark-rect role-mark child_layer_0_marks/g) ?? []).length).toBe(2);
    expect((svg.match(/<g class="mark-symbol role-mark child_layer_1_marks/g) ?? []).length).toBe(2);
    expectFiguresRender(pr.result);
    // the ordering figures' panels follow the spec's protocol order, not the alphabet
    const panels = (
      JSON.parse(readFileSync(join(pr.result.out, 'figures', 'rho.vl.json'), 'utf8')) as { facet: { row: { sort: string[] } } }
    ).facet.row.sort;
    expect(panels).toEqual(PROTOCOLS.map((p) => `fq117 · N=16 · ${p}`));
  });
});

describe('report of relay chains: lost in propagation', () => {
  const SPEC_RELAY = `name: relay
dataset: ${RHEON6}
prompts: [fq367, fq117]
geometries: [chain]
sizes: [4, 8, 16]
temperatures: [0.7]
trials: 2
sweeps: 6
seed: 5
protocol: [glauber, ssvp]
backend: {kind: surrogate}
encoders: [{name: hashing, kind: hashing, dim: 64}]
judge: {kind: reference}
`;
  let rl: Awaited<ReturnType<typeof sweepAndReport>>;

  beforeAll(async () => {
    rl = await sweepAndReport(SPEC_RELAY);
  });

  it('Figure 10: temperature on x, system size as colour, one size ladder per geometry and prompt (arm), the best temperature per size', () => {
    const spec = JSON.parse(readFileSync(join(rl.result.out, 'figures', 'delta-rho.vl.json'), 'utf8')) as {
      facet: { row: { field: string; sort: string[] }; column: { field: string } };
      spec: { layer: { encoding: { x?: { field: string }; color?: { field: string } } }[] };
      data: { values: { ladder: string; n: number; best: boolean }[] };
    };
    expect(spec.facet.row.field).toBe('ladder');
    expect(spec.facet.row.sort).toEqual(['fq117 · glauber', 'fq117 · ssvp', 'fq367 · glauber', 'fq367 · ssvp']);
    expect(spec.facet.column.field).toBe('geometry');
    const line = spec.spec.layer.find((l) => l.encoding.x?.field === 'temperature' && l.encoding.color !== undefined)!;
    expect(line.encoding.color!.field).toBe('n');
    for (const ladder of spec.facet.row.sort) {
      const pts = spec.data.values.filter((v) => v.ladder === ladder);
      expect(pts.map((v) => v.n).sort((a, b) => a - b)).toEqual([4, 8, 16]);
      expect(pts.filter((v) => v.best)).toHaveLength(3);
    }
  });

  it("accuracy at the budget: the CSV matches a walk over the event rows in TS, B is the least total token count of the prompt's runs", async () => {
    // a different method than the report's SQL: every row in event order, walked run by run
    const rows = await queryRows(
      `SELECT run_id, prompt_id, protocol, n, event, role, sweep, agent, tag, prompt_tokens + completion_tokens AS tokens FROM read_parquet('${rl.corpus}/events/*.parquet') ORDER BY run_id, event`,
    );
    const runs = new Map<string, typeof rows>();
    for (const r of rows) runs.set(r.run_id as string, [...(runs.get(r.run_id as string) ?? []), r]);
    const budgets = new Map<string, number>();
    for (const rs of runs.values()) {
      const total = rs.reduce((s, r) => s + (r.tokens as number), 0);
      const prompt = rs[0].prompt_id as string;
      budgets.set(prompt, Math.min(budgets.get(prompt) ?? Infinity, total));
    }
    const fromRuns = await queryRows(
      `SELECT prompt_id, min(prompt_tokens + completion_tokens) AS b FROM read_parquet('${rl.corpus}/runs.parquet') GROUP BY prompt_id`,
    );
    for (const r of fromRuns) expect(budgets.get(r.prompt_id as string)).toBe(r.b);
    expect(new Set(budgets.values()).size).toBe(2);

    const atBudget = (rs: typeof rows, limit: number) => {
      const byEvent = new Map<number, typeof rows>();
      for (const r of rs) byEvent.set(r.event as number, [...(byEvent.get(r.event as number) ?? []), r]);
      const snapshot = new Map<number, { tag: string; sweep: number }>();
      let spent = 0;
      let used = 0;
      for (const e of [...byEvent.keys()].sort((a, b) => a - b)) {
        spent += byEvent.get(e)!.reduce((s, r) => s + (r.tokens as number), 0);
        if (spent > limit) break;
        used = spent;
        for (const r of byEvent.get(e)!)
          if (r.role === 'agent') snapshot.set(r.agent as number, { tag: r.tag as string, sweep: r.sweep as number });
      }
      const tags = [...snapshot.values()].map((x) => x.tag);
      const c = tags.filter((t) => t === 'correct').length;
      const h = tags.filter((t) => t === 'hallucinated').length;
      return { accuracy: c + h > 0 ? c / (c + h) : null, used, sweep: Math.max(...[...snapshot.values()].map((x) => x.sweep)) };
    };
    const groups = new Map<string, { at: (number | null)[]; full: (number | null)[]; used: number[]; sweep: number[] }>();
    for (const rs of runs.values()) {
      const key = `${rs[0].prompt_id}/${rs[0].protocol}/${rs[0].n}`;
      const g = groups.get(key) ?? { at: [], full: [], used: [], sweep: [] };
      const cut = atBudget(rs, budgets.get(rs[0].prompt_id as string)!);
      g.at.push(cut.accuracy);
      g.used.push(cut.used);
      g.sweep.push(cut.sweep);
      g.full.push(atBudget(rs, Infinity).accuracy);
      groups.set(key, g);
    }
    // the budget must bite: cut at B, some run is not at its final snapshot
    expect([...groups.values()].some((g) => g.at.some((a, i) => a !== g.full[i]))).toBe(true);

    const { header, rows: csv } = readCsv(rl.result, 'lost-in-propagation-accuracy');
    expect(header).toContain('accuracy (mean)');
    expect(csv).toHaveLength(2 * 2 * 3);
    for (const row of csv) {
      expect(Number(row['budget B (tokens)'])).toBe(budgets.get(row.prompt!));
      const g = groups.get(`${row.prompt}/${row.protocol}/${row.N}`)!;
      const defined = g.at.filter((a): a is number => a !== null);
      expect(Number(row.runs)).toBe(2);
      expect(Number(row['accuracy (mean)']), `${row.prompt} ${row.protocol} N=${row.N}`).toBeCloseTo(
        defined.reduce((a, b) => a + b, 0) / defined.length,
        12,
      );
      expect(Number(row['accuracy (min)'])).toBeCloseTo(Math.min(...defined), 12);
      expect(Number(row['accuracy (max)'])).toBeCloseTo(Math.max(...defined), 12);
      expect(Number(row['tokens used (mean)'])).toBeCloseTo((g.used[0] + g.used[1]) / 2, 9);
      expect(Number(row['sweep reached (mean)'])).toBeCloseTo((g.sweep[0] + g.sweep[1]) / 2, 12);
    }
    expect(rl.page).toContain(
      `Here B = ${budgets.get('fq117')!.toLocaleString('en-US')} tokens for fq117, ${budgets.get('fq367')!.toLocaleString('en-US')} tokens for fq367.`,
    );
    expect(pageTable(rl.page, 'lost-in-propagation-accuracy')).toHaveLength(12);
    // figure and table are both sections of the page: their anchors must not collide
    const ids = [...rl.page.matchAll(/<section id="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('the figure: accuracy against chain length, a line per protocol in each prompt column, rendered', () => {
    const spec = JSON.parse(readFileSync(join(rl.result.out, 'figures', 'lost-in-propagation.vl.json'), 'utf8')) as {
      data: { values: Record<string, unknown>[] };
    };
    expect(spec.data.values).toHaveLength(12);
    const svg = readFileSync(join(rl.result.out, 'figures', 'lost-in-propagation.svg'), 'utf8');
    expect((svg.match(/<g class="mark-line role-mark/g) ?? []).length).toBe(2 * 2);
    for (const p of ['fq117', 'fq367']) expect(svg).toContain(`>${p}</text>`);
    expectFiguresRender(rl.result);
  });
});

describe('report statistics', () => {
  it('average ranks share tied places', () => {
    expect(averageRanks([10, 20, 20, 5])).toEqual([2, 3.5, 3.5, 1]);
  });

  it('spearman matches its definition on a small case with a tie, and is undefined for a constant side', () => {
    // y = [5, 6, 7, 8, 7] ranks [1, 2, 3.5, 5, 3.5] (the two 7s share places 3 and 4); with ties, Spearman is Pearson of ranks
    const r = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])!;
    const rx = [1, 2, 3, 4, 5];
    const ry = [1, 2, 3.5, 5, 3.5];
    const mx = 3;
    const my = 3;
    const cov = rx.reduce((s, x, i) => s + (x - mx) * (ry[i] - my), 0);
    const sx = Math.sqrt(rx.reduce((s, x) => s + (x - mx) ** 2, 0));
    const sy = Math.sqrt(ry.reduce((s, y) => s + (y - my) ** 2, 0));
    expect(r).toBeCloseTo(cov / (sx * sy), 14);
    expect(r).toBeCloseTo(0.8207826816681233, 12); // scipy.stats.spearmanr on the same data
    expect(spearman([1, 2, 3], [3, 2, 1])).toBe(-1);
    expect(spearman([1, 2, 3], [4, 4, 4])).toBeNull();
  });
});
