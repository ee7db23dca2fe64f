import type { TopLevelSpec } from 'vega-lite';
import { armColumns, armNote, armOf, armsPresent, everyPromptNote, exclusionNote, pooledRuns } from './arms.js';
import type { CorpusData, RunInfo } from './corpus-data.js';
import { CONFIG, LINE_LEGEND, SCHEMA } from './figure-style.js';
import type { Figure } from './figure.js';
import { answers, runSeries } from './run-series.js';
import { spreadBand, spreadWords, type Spread } from './stats.js';
import type { Cell, Table } from './table.js';

const promptsOf = (runs: readonly RunInfo[]) => [...new Set(runs.map((r) => r.prompt_id))].sort();

/** Σ hallucinated / Σ answers over every snapshot of the runs; null when they have no answer. */
function share(runs: readonly RunInfo[], series: ReturnType<typeof runSeries>): number | null {
  let h = 0;
  let all = 0;
  for (const r of runs) {
    for (const p of series.get(r.run_id) ?? []) {
      h += p.n_hallucinated;
      all += answers(p);
    }
  }
  return all > 0 ? h / all : null;
}

/** Table 7 of the paper: the share of answers tagged hallucinated, by temperature (rows) and prompt (columns), per arm. */
export function hallucinationShareTable(data: CorpusData): Table {
  const series = runSeries(data);
  const arms = armColumns(data);
  const done = data.runs.filter((r) => series.has(r.run_id));
  const prompts = promptsOf(done);
  const temperatures = [...new Set(done.map((r) => r.temperature))].sort((a, b) => a - b);
  const rows: Cell[][] = [];
  for (const arm of armsPresent(done, arms)) {
    const inArm = done.filter((r) => armOf(r, arms) === arm);
    for (const t of [...temperatures, null]) {
      const at = inArm.filter((r) => t === null || r.temperature === t);
      if (at.length === 0) continue;
      rows.push([
        ...(arms.length > 0 ? [arm] : []),
        t === null ? 'all' : String(t),
        ...prompts.map((p) =>
          share(
            at.filter((r) => r.prompt_id === p),
            series,
          ),
        ),
        // The paper's pooled column includes its Prompt 1 (22.0% at T = 1.6 needs it): every prompt, always.
        share(at, series),
      ]);
    }
  }
  return {
    id: 'hallucination-share',
    title: 'Table 7: hallucination share by temperature and prompt',
    caption:
      'the share of answers the judge tagged hallucinated: Σ hallucinated / Σ answers over every snapshot t = 0 … final of every run of the cell ' +
      '(all geometries, sizes and trials; answers include not-known ones and judge failures; a run that stopped early counts up to its last sweep). ' +
      'The last row of each block pools the temperatures; the last column pools the prompts.' +
      everyPromptNote(data, 'the pooled column pools') +
      armNote(data),
    columns: [...(arms.length > 0 ? ['arm'] : []), 'T', ...prompts, 'pooled'],
    rows,
    empty: 'No run is complete yet.',
  };
}

/** Figure 5 of the paper: each run's hallucination density at t = 0 against its final one; runs above the diagonal amplify. */
export function amplificationFigure(data: CorpusData): Figure | null {
  const series = runSeries(data);
  const arms = armColumns(data);
  const runs = pooledRuns(data).filter((r) => series.has(r.run_id));
  if (runs.length === 0) return null;
  const { values, undefinedRuns, cohesionRose, counts } = amplificationPoints(runs, series, arms);
  const order = armsPresent(runs, arms).filter((a) => counts.has(a));
  const countText =
    order.length === 0
      ? 'no run has ρ defined at both ends'
      : order.map((a) => `${a ? `${a}: ` : ''}${counts.get(a)!.k} of ${counts.get(a)!.n} runs amplify`).join('; ');
  const x = { field: 'rho0', type: 'quantitative', title: 'ρ(0)', scale: { domain: [0, 1] } };
  const y = { field: 'rho_final', type: 'quantitative', title: 'ρ (final)', scale: { domain: [0, 1] } };
  const layer = [
    {
      data: { values: [{ a: 0 }, { a: 1 }] },
      mark: { type: 'line', color: '#999', strokeDash: [4, 3] },
      encoding: { x: { field: 'a', type: 'quantitative' }, y: { field: 'a', type: 'quantitative' } },
    },
    {
      mark: { type: 'point', filled: true, size: 30, opacity: 0.75 },
      encoding: {
        x,
        y,
        color: { field: 'geometry', type: 'nominal', title: 'geometry' },
        shape: {
          field: 'amplifies',
          type: 'nominal',
          title: 'amplifies',
          scale: { domain: [false, true], range: ['circle', 'triangle-up'] },
        },
        tooltip: [{ field: 'run_id' }, { field: 'rho0', format: '.3f' }, { field: 'rho_final', format: '.3f' }],
      },
    },
  ];
  const spec = armFacets(
    `initial against final ρ per run: ${countText}`,
    values,
    layer,
    arms,
    order,
    { width: 220, height: 220 },
    { width: 260, height: 260 },
  );
  return {
    id: 'amplification',
    title: 'Figure 5: initial against final hallucination density, per run',
    caption:
      'one point per run: hallucination density ρ = #hallucinated / (#correct + #hallucinated) at t = 0 (x) and at its last sweep (y); above the dashed diagonal the ' +
      `interaction amplified hallucination (ρ final > ρ(0), drawn as triangles): ${countText}. ` +
      (undefinedRuns > 0
        ? `${undefinedRuns} run${undefinedRuns === 1 ? ' is' : 's are'} left out: ρ undefined at t = 0 or at the end (no answer judged correct or hallucinated). `
        : '') +
      `Cohesion q (encoder ${data.encoders[0]}) rose from t = 0 to the last sweep in ${cohesionRose} of ${runs.length} runs.` +
      exclusionNote(data) +
      armNote(data),
    spec,
  };
}

/** Figure 6 of the paper: the hallucination share against sweep t, one line per prompt, pooled over configurations, a band over trials. */
export function sweepHallucinationFigure(data: CorpusData): Figure | null {
  const series = runSeries(data);
  const arms = armColumns(data);
  const runs = data.runs.filter((r) => series.has(r.run_id));
  if (runs.length === 0) return null;
  const spread = data.spread ?? 'sd';
  const values = sharesBySweep(runs, series, arms, spread);
  const prompts = promptsOf(runs);
  const xEnc = { field: 'sweep', type: 'quantitative', title: 'sweep t', axis: { tickMinStep: 1, format: 'd' } };
  const color = {
    field: 'prompt_id',
    type: 'nominal',
    title: 'prompt',
    sort: prompts,
    scale: { scheme: 'tableau10' },
    legend: LINE_LEGEND,
  };
  const layer = [
    {
      mark: { type: 'area', opacity: 0.15 },
      encoding: { x: xEnc, y: { field: 'lo', type: 'quantitative', scale: { domain: [0, 1] } }, y2: { field: 'hi' }, color },
    },
    {
      mark: { type: 'line', strokeWidth: 1.8, point: { filled: true, size: 20 } },
      encoding: {
        x: xEnc,
        y: { field: 'share', type: 'quantitative', title: 'hallucination share', scale: { domain: [0, 1] } },
        color,
        tooltip: [{ field: 'prompt_id' }, { field: 'sweep' }, { field: 'share', format: '.3f' }, { field: 'trials' }],
      },
    },
  ];
  const armsOrder = armsPresent(runs, arms);
  const spec = armFacets(
    'hallucination share by sweep, per prompt',
    values,
    layer,
    arms,
    armsOrder,
    { width: 240, height: 180 },
    { width: 300, height: 200 },
  );
  return {
    id: 'hallucination-by-sweep',
    title: 'Figure 6: hallucination share by sweep, per prompt',
    caption:
      'the share of answers tagged hallucinated in snapshot(t) (Σ hallucinated / Σ answers over every configuration of the prompt: geometries, sizes, temperatures), ' +
      `one line per prompt; the share is computed for each trial index apart and the line is their mean, the band ± ${spreadWords(spread)} over trials ` +
      `(no band with a single trial; ${spread === 'sd' ? "the paper's spread; --spread se draws the standard error" : "--spread se: the paper's is the standard deviation"}). ` +
      'A run that stopped early counts with its last snapshot at later sweeps.' +
      widestNote(values, spread) +
      ' ' +
      'Every prompt is drawn: the lines are per prompt, not pooled over prompts.' +
      armNote(data),
    spec,
  };
}

type Series = ReturnType<typeof runSeries>;

/** A run's point (its ρ at t = 0 and at its end, whether it amplifies), the runs left out, and amplifying runs per arm. */
function amplificationPoints(
  runs: readonly RunInfo[],
  series: Series,
  arms: ReturnType<typeof armColumns>,
): { values: object[]; undefinedRuns: number; cohesionRose: number; counts: Map<string, { k: number; n: number }> } {
  const values: object[] = [];
  let undefinedRuns = 0;
  let cohesionRose = 0;
  const counts = new Map<string, { k: number; n: number }>();
  for (const r of runs) {
    const s = series.get(r.run_id)!;
    const [first, last] = [s[0], s.at(-1)!];
    if (last.cohesion > first.cohesion) cohesionRose++;
    if (first.rho === null || last.rho === null) {
      undefinedRuns++;
      continue;
    }
    const arm = armOf(r, arms);
    const amplifies = last.rho > first.rho;
    const c = counts.get(arm) ?? { k: 0, n: 0 };
    c.n++;
    if (amplifies) c.k++;
    counts.set(arm, c);
    values.push({
      run_id: r.run_id,
      arm,
      geometry: r.geometry,
      temperature: r.temperature,
      rho0: first.rho,
      rho_final: last.rho,
      amplifies,
    });
  }
  return { values, undefinedRuns, cohesionRose, counts };
}

/** One point of Figure 6: a prompt's share at sweep t, the mean over trials, and its band (null with one trial). */
interface SharePoint {
  arm: string;
  prompt_id: string;
  sweep: number;
  share: number | null;
  lo: number | null;
  hi: number | null;
  trials: number;
}

/** The caption's sentence on the widest band, the paper's "at most 4.3 percentage points" (Appendix B). */
function widestNote(values: readonly SharePoint[], spread: Spread): string {
  let widest: SharePoint | null = null;
  for (const v of values)
    if (v.hi !== null && v.share !== null && (widest === null || v.hi - v.share > widest.hi! - widest.share!)) widest = v;
  if (widest === null) return '';
  const pp = (100 * (widest.hi! - widest.share!)).toFixed(1);
  return ` The widest band: ± ${pp} percentage points (${widest.prompt_id}, t = ${widest.sweep}${widest.arm ? `, ${widest.arm}` : ''}), one ${spread} (the paper's Appendix B: a pooled sd of at most 4.3).`;
}

/**
 * The hallucination share per (arm, prompt, sweep): a mean over trials with its band (± one sd or se). A run
 * that stopped early holds its last snapshot.
 */
function sharesBySweep(runs: readonly RunInfo[], series: Series, arms: ReturnType<typeof armColumns>, spread: Spread): SharePoint[] {
  const lastSweep = Math.max(...[...series.values()].map((s) => s.at(-1)!.sweep));
  // (arm, prompt, sweep, trial) -> hallucinated and answers; a run that stopped early holds its last snapshot.
  const cells = new Map<string, { arm: string; prompt: string; sweep: number; trials: Map<number, { h: number; all: number }> }>();
  for (const r of runs) {
    const s = series.get(r.run_id)!;
    const arm = armOf(r, arms);
    for (let t = 0, i = 0; t <= lastSweep; t++) {
      while (i + 1 < s.length && s[i + 1].sweep <= t) i++;
      if (s[i].sweep > t) continue;
      const key = `${arm}\u0000${r.prompt_id}\u0000${t}`;
      const c = cells.get(key) ?? { arm, prompt: r.prompt_id, sweep: t, trials: new Map() };
      const tr = c.trials.get(r.trial) ?? { h: 0, all: 0 };
      tr.h += s[i].n_hallucinated;
      tr.all += answers(s[i]);
      c.trials.set(r.trial, tr);
      cells.set(key, c);
    }
  }
  return [...cells.values()].map((c) => {
    const band = spreadBand(
      [...c.trials.values()].map((t) => (t.all > 0 ? t.h / t.all : null)),
      spread,
    );
    return { arm: c.arm, prompt_id: c.prompt, sweep: c.sweep, share: band.mean, lo: band.lo, hi: band.hi, trials: band.n };
  });
}

/** A figure of `layer`, one facet column per arm where the corpus has arms, else one panel. */
function armFacets(
  title: string,
  values: object[],
  layer: object[],
  arms: ReturnType<typeof armColumns>,
  order: string[],
  facet: { width: number; height: number },
  single: { width: number; height: number },
): TopLevelSpec {
  return (arms.length > 0
    ? {
        $schema: SCHEMA,
        title,
        config: CONFIG,
        data: { values },
        facet: { column: { field: 'arm', type: 'nominal', sort: order, title: null } },
        spec: { ...facet, layer },
      }
    : {
        $schema: SCHEMA,
        title,
        config: CONFIG,
        data: { values },
        ...single,
        layer,
      }) as unknown as TopLevelSpec;
}
