import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import { beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { averageRanks, spearman } from '@panta/report';
import { RHEON6, panta, tempDir, writeSpec } from '../../../test/helpers.js';

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

beforeAll(() => {
  dir = tempDir();
  corpus = join(dir, 'corpus');
  const run = panta(['run', writeSpec(dir, SPEC), '--out', corpus]);
  expect(run.code).toBe(0);
  const r = panta(['report', corpus]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^report: .*report\/index\.html \(8 figures as SVG and PNG in .*, 4 tables\)$/m);
  report = join(corpus, 'report');
  html = readFileSync(join(report, 'index.html'), 'utf8');
});

const svgOf = (id: string) => readFileSync(join(report, 'figures', `${id}.svg`), 'utf8');
const specData = (id: string) => (JSON.parse(readFileSync(join(report, 'figures', `${id}.vl.json`), 'utf8')) as { data: { values: Record<string, unknown>[] } }).data.values;

/** The rows of one HTML table of index.html, cells as text. */
function htmlTable(id: string): string[][] {
  const section = new RegExp(`<section id="${id}">([\\s\\S]*?)</section>`).exec(html)?.[1];
  expect(section, `section ${id}`).toBeDefined();
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(section!)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((tr) => [...tr[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((td) => td[1]!));
}

/** Final sweep of each run, per encoder, straight from order_params.parquet. */
const FINAL = () => `SELECT * FROM ${op()} QUALIFY sweep = max(sweep) OVER (PARTITION BY run_id, encoder)`;

describe('panta report', () => {
  it('writes every figure as SVG that parses and PNG that is a real picture', () => {
    const ids = [...ENCODERS.flatMap((e) => [`magnetisation-${e}`, `cohesion-${e}`]), 'rho', 'delta-rho', ...ENCODERS.map((e) => `phase-space-${e}`)];
    expect(readdirSync(join(report, 'figures')).filter((f) => f.endsWith('.png')).sort()).toEqual(ids.map((i) => `${i}.png`).sort());
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

      const expected = await queryRows(
        `SELECT config_id, sweep, avg(magnetisation) AS m, min(magnetisation) AS lo, max(magnetisation) AS hi, count(*) AS trials FROM ${op()} WHERE encoder = '${e}' GROUP BY ALL ORDER BY ALL`,
      );
      const drawn = specData(`magnetisation-${e}`);
      expect(drawn).toHaveLength(GEOMETRIES.length * TEMPERATURES.length * 4);
      expect(new Set(drawn.map((d) => d.temperature)).size).toBe(TEMPERATURES.length);
      for (const x of expected) {
        const d = drawn.find((v) => v.config_id === x.config_id && v.sweep === x.sweep)!;
        expect(d.m as number).toBeCloseTo(x.m as number, 12);
        expect(d.m_lo).toBe(x.lo);
        expect(d.m_hi).toBe(x.hi);
        expect(d.trials).toBe(2);
      }
    }
    const q = specData('cohesion-h16');
    const [qExpected] = await queryRows(`SELECT avg(cohesion) AS q FROM ${op()} WHERE encoder = 'h16' AND config_id = 'fq117-torus2d-n16-T0.8-glauber' AND sweep = 2`);
    expect(q.find((d) => d.config_id === 'fq117-torus2d-n16-T0.8-glauber' && d.sweep === 2)!.q as number).toBeCloseTo(qExpected!.q as number, 12);
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
      expect(marked[0]!.temperature).toBe(best.temperature);
      expect(marked[0]!.delta_rho as number).toBeCloseTo(best.d as number, 12);
    }
    // one diamond per geometry panel
    expect((svgOf('delta-rho').match(/<g class="mark-symbol role-mark child_layer_3_marks/g) ?? []).length).toBe(GEOMETRIES.length);
    expect(html).toMatch(/Δρ = ρ\(final sweep\) − ρ\(0\) \(DESIGN\.md section 4/);
  });

  it('phase space draws one cohesion-against-rho trajectory per configuration', () => {
    const svg = svgOf('phase-space-h384');
    expect((svg.match(/<g class="mark-line role-mark/g) ?? []).length).toBe(GEOMETRIES.length * TEMPERATURES.length);
    const drawn = specData('phase-space-h384');
    expect(new Set(drawn.map((d) => d.config_id)).size).toBe(GEOMETRIES.length * TEMPERATURES.length);
    expect(drawn.every((d) => typeof d.rho === 'number' && typeof d.q === 'number')).toBe(true);
  });

  it('geometry ladder: one row per geometry, final cohesion per encoder as order_params gives it', async () => {
    const rows = htmlTable('geometry-ladder');
    expect(rows.map((r) => r[0])).toEqual(GEOMETRIES); // rising k: 2, 4, 15
    const expected = await queryRows(
      `SELECT r.geometry, f.encoder, avg(f.cohesion) AS q FROM (${FINAL()}) f JOIN read_parquet('${corpus}/runs.parquet') r USING (run_id) GROUP BY ALL`,
    );
    const csv = readFileSync(join(report, 'tables', 'geometry-ladder.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe('geometry,k,runs,q final (h384),q final (h16),ρ final');
    for (const [i, g] of GEOMETRIES.entries()) {
      const cells = csv[i + 1]!.split(',');
      expect(cells[0]).toBe(g);
      expect(cells[2]).toBe('6');
      ENCODERS.forEach((e, j) => {
        const q = expected.find((x) => x.geometry === g && x.encoder === e)!.q as number;
        expect(Number(cells[3 + j])).toBeCloseTo(q, 12);
        expect(rows[i]![3 + j]).toBe(q.toFixed(3));
      });
    }
  });

  it('encoder robustness: Spearman of final cohesion between the two encoders, recomputed in DuckDB', async () => {
    const rows = htmlTable('encoder-robustness');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.slice(0, 3)).toEqual(['h384', 'h16', String(GEOMETRIES.length * TEMPERATURES.length)]);
    const shown = Number(readFileSync(join(report, 'tables', 'encoder-robustness.csv'), 'utf8').trim().split('\n')[1]!.split(',')[3]);
    expect(shown).toBeGreaterThanOrEqual(-1);
    expect(shown).toBeLessThanOrEqual(1);
    // Spearman = Pearson of average ranks: rank() plus half the ties beyond the first
    const [{ rs }] = (await queryRows(
      `WITH f AS (SELECT config_id, encoder, avg(cohesion) AS q FROM (${FINAL()}) GROUP BY ALL),
       r AS (SELECT config_id, encoder, rank() OVER (PARTITION BY encoder ORDER BY q) + (count(*) OVER (PARTITION BY encoder, q) - 1) / 2.0 AS rk FROM f)
       SELECT corr(a.rk, b.rk) AS rs FROM r a JOIN r b USING (config_id) WHERE a.encoder = 'h384' AND b.encoder = 'h16'`,
    )) as [{ rs: number }];
    expect(shown).toBeCloseTo(rs, 12);
    expect(rows[0]![3]).toBe(rs.toFixed(3));
  });

  it('drift and cost tables carry runs.parquet, and early stopping is not applicable', async () => {
    const drift = htmlTable('drift');
    expect(drift).toHaveLength(GEOMETRIES.length * TEMPERATURES.length);
    const [focus] = await queryRows(`SELECT avg(focus_total) AS f, count(drift_onset) AS drifted FROM read_parquet('${corpus}/runs.parquet') WHERE geometry = 'ring' AND temperature = 0.8`);
    const ring = drift.find((r) => r[1] === 'ring' && r[2] === '0.8')!;
    expect(ring[4]).toBe((focus!.f as number).toFixed(3));
    expect(ring[5]).toBe(String(focus!.drifted));
    const cost = htmlTable('cost');
    expect(cost.map((r) => r[0])).toEqual([...GEOMETRIES, 'total']);
    const [sums] = await queryRows(`SELECT sum(calls) AS calls, sum(prompt_tokens) AS pt, count(*) AS runs FROM read_parquet('${corpus}/runs.parquet')`);
    const total = cost.at(-1)!;
    expect(total[1]).toBe(`${sums!.runs}/${sums!.runs}`);
    expect(total[3]).toBe((sums!.calls as number).toLocaleString('en-US'));
    expect(total[5]).toBe((sums!.pt as number).toLocaleString('en-US'));
    expect(total[7]).toBe('n/a'); // the surrogate has no price table
    expect(cost.every((r) => r[9] === 'not applicable')).toBe(true);
  });

  it('index.html is self-contained: inline SVG and CSS, no script, no stylesheet link, no URL', () => {
    expect((html.match(/<svg\b/g) ?? []).length).toBe(8);
    expect(html).toMatch(/<style>[\s\S]+<\/style>/);
    expect(html).not.toMatch(/<script\b/i);
    expect(html).not.toMatch(/<link\b/i);
    expect(html).not.toMatch(/@import|url\(/i);
    expect(html).not.toMatch(/https?:\/\//i);
    for (const href of html.matchAll(/href="([^"]*)"/g)) {
      const target = href[1]!;
      if (!target.startsWith('#')) expect(existsSync(join(report, target)), target).toBe(true);
    }
  });

  it('--out puts the report elsewhere and leaves the corpus alone', () => {
    const out = join(dir, 'elsewhere');
    const r = panta(['report', corpus, '--out', out]);
    expect(r.code).toBe(0);
    expect(existsSync(join(out, 'index.html'))).toBe(true);
    expect(readdirSync(join(out, 'figures'))).toHaveLength(24);
  });

  it('an incomplete corpus (status running, a run missing) still reports the complete runs, with a visible note', () => {
    const partial = join(dir, 'partial');
    cpSync(corpus, partial, { recursive: true });
    for (const f of ['report', 'order_params.parquet', 'runs.parquet', 'whitening', 'events/fq117-ring-n16-T0.2-glauber-t0.parquet']) rmSync(join(partial, f), { recursive: true });
    const manifest = JSON.parse(readFileSync(join(partial, 'manifest.json'), 'utf8')) as { status: string };
    writeFileSync(join(partial, 'manifest.json'), JSON.stringify({ ...manifest, status: 'running' }));
    const r = panta(['report', partial]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/note: This corpus is incomplete \(status running\): 17 of 18 runs are complete/);
    const page = readFileSync(join(partial, 'report', 'index.html'), 'utf8');
    expect(page).toMatch(/<p class="note">This corpus is incomplete \(status running\): 17 of 18 runs are complete/);
    const drawn = JSON.parse(readFileSync(join(partial, 'report', 'figures', 'magnetisation-h384.vl.json'), 'utf8')) as { data: { values: { config_id: string; trials: number }[] } };
    expect(drawn.data.values.filter((v) => v.config_id === 'fq117-ring-n16-T0.2-glauber').every((v) => v.trials === 1)).toBe(true);
    expect(existsSync(join(partial, 'order_params.parquet'))).toBe(false); // reading never writes the corpus
  });

  it('a folder that is not a corpus: one line naming it, the problem and the fix, exit 2, nothing written', () => {
    const empty = tempDir();
    const r = panta(['report', empty]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`panta: ${join(empty, 'manifest.json')}: missing: this folder is not a Panta corpus; fix: give the folder a sweep wrote (the --out of \`panta run\`)`);
    expect(readdirSync(empty)).toEqual([]);
    expect(r.stdout).toBe('');

    const missing = join(empty, 'nowhere');
    const m = panta(['report', missing]);
    expect(m.code).toBe(2);
    expect(m.stderr.trim()).toBe(`panta: ${missing}: no such folder; fix: give the folder a sweep wrote (the --out of \`panta run\`)`);
    expect(existsSync(missing)).toBe(false);
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
    const cov = rx.reduce((s, x, i) => s + (x - mx) * (ry[i]! - my), 0);
    const sx = Math.sqrt(rx.reduce((s, x) => s + (x - mx) ** 2, 0));
    const sy = Math.sqrt(ry.reduce((s, y) => s + (y - my) ** 2, 0));
    expect(r).toBeCloseTo(cov / (sx * sy), 14);
    expect(r).toBeCloseTo(0.8207826816681233, 12); // scipy.stats.spearmanr on the same data
    expect(spearman([1, 2, 3], [3, 2, 1])).toBe(-1);
    expect(spearman([1, 2, 3], [4, 4, 4])).toBeNull();
  });
});
