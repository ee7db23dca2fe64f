import type { TopLevelSpec } from 'vega-lite';
import { curves, finalDeltaRho, layout, type CurvePoint, type Layout } from './aggregate.js';
import type { CorpusData } from './corpus-data.js';
import { CONFIG, LINE_LEGEND, PANEL, SCHEMA, temperatureColor } from './figure-style.js';
import type { Figure } from './figure.js';

function facetGrid(lay: Layout) {
  return {
    row: {
      field: 'panel',
      type: 'nominal' as const,
      sort: lay.panels,
      title: null,
      header: { labelAngle: 0, labelAlign: 'left' as const },
    },
    column: { field: 'geometry', type: 'nominal' as const, sort: lay.geometries, title: null },
  };
}

function grid(title: string, values: object[], lay: Layout, layer: unknown[]): TopLevelSpec {
  return {
    $schema: SCHEMA,
    title,
    config: CONFIG,
    data: { values },
    facet: facetGrid(lay),
    spec: { ...PANEL, layer },
    resolve: { scale: { y: 'shared' } },
  } as unknown as TopLevelSpec;
}

/** Mean line and a band of ± one standard error over trials of one field of the curve points, against sweep t. */
function curveLayers(field: 'm' | 'q' | 'rho' | 'cds', yTitle: string, lay: Layout, domain?: [number, number]): unknown[] {
  const x = { field: 'sweep', type: 'quantitative', title: 'sweep t', axis: { tickMinStep: 1, format: 'd' } };
  const scale = domain ? { domain } : { zero: false };
  return [
    {
      mark: { type: 'area', opacity: 0.15 },
      encoding: {
        x,
        y: { field: `${field}_lo`, type: 'quantitative', scale },
        y2: { field: `${field}_hi` },
        color: { ...temperatureColor(lay), legend: LINE_LEGEND },
      },
    },
    {
      mark: { type: 'line', strokeWidth: 1.8 },
      encoding: {
        x,
        y: { field, type: 'quantitative', title: yTitle, scale },
        color: { ...temperatureColor(lay), legend: LINE_LEGEND },
        tooltip: [
          { field: 'config_id' },
          { field: 'sweep' },
          { field, format: '.3f' },
          { field: 'trials' },
          { field: 'held', title: 'held (stopped early)' },
        ],
      },
    },
  ];
}

const MEASURES = {
  magnetisation: { field: 'm' as const, symbol: 'm', name: 'magnetisation', domain: [0, 1] as [number, number] },
  cohesion: { field: 'q' as const, symbol: 'q', name: 'cohesion', domain: undefined },
};

/** What the band is: ± one standard error over trials, none where a configuration has a single trial. */
export function bandNote(data: CorpusData): string {
  const trials = new Map<string, number>();
  for (const r of data.runs) trials.set(r.config_id, (trials.get(r.config_id) ?? 0) + 1);
  const single = [...trials.values()].filter((t) => t < 2).length;
  const base = 'the band spans the mean ± one standard error over trials (SE = sd/√n, sample sd, n trials)';
  if (single === 0) return `${base}.`;
  if (single === trials.size) return `${base}; every configuration has a single trial, so there is no standard error and no band is drawn.`;
  return `${base}; ${single} configuration${single === 1 ? ' has' : 's have'} a single trial and no band.`;
}

/** How curves treat runs that stopped early (aggregate.ts `curves`), said only when some did. */
function heldNote(data: CorpusData): string {
  const stopped = data.runs.filter((r) => r.stopped_early === true).length;
  if (stopped === 0) return '';
  return (
    ` Early stopping: ${stopped} run${stopped === 1 ? '' : 's'} stopped before the last sweep; such a run counts in the mean and band with its last value ` +
    "(carried forward, as the stopping rule judged it settled) at every later sweep its configuration's longest run reached, so every point averages all trials."
  );
}

/** Ordering curves: magnetisation or cohesion against sweep t, one column per geometry, one line per temperature. */
export function orderingFigure(
  data: CorpusData,
  measure: 'magnetisation' | 'cohesion',
  encoder: string,
  lay: Layout = layout(data),
): Figure {
  const m = MEASURES[measure];
  const trials = Math.max(0, ...data.runs.map((r) => r.trial + 1));
  return {
    id: `${measure}-${encoder}`,
    title: `${m.name[0].toUpperCase()}${m.name.slice(1)} ${m.symbol}(t), encoder ${encoder}`,
    caption:
      `${m.name} ${m.symbol} of snapshot(t) against sweep t (t = 0: the initial answers), encoder ${encoder}; ` +
      `one column per geometry, one row per prompt and size (and arm), one line per temperature T, the mean over ${trials} trial${trials === 1 ? '' : 's'}; ` +
      bandNote(data) +
      heldNote(data),
    spec: grid(
      `${m.name} ${m.symbol}(t) · encoder ${encoder}`,
      stripCurves(curves(data, lay, encoder), m.field),
      lay,
      curveLayers(m.field, m.symbol, lay, m.domain),
    ),
  };
}

/** Hallucination density rho = #hallucinated / (#correct + #hallucinated) against sweep t. */
export function rhoFigure(data: CorpusData, lay: Layout = layout(data)): Figure {
  return {
    id: 'rho',
    title: 'Hallucination density ρ(t)',
    caption:
      'hallucination density ρ = #hallucinated / (#correct + #hallucinated) of snapshot(t) against sweep t, from the judge tags ' +
      `(the same for every encoder); layout as above: mean over trials; ${bandNote(data)} A gap means no answer was judged correct or hallucinated.` +
      heldNote(data),
    spec: grid(
      'hallucination density ρ(t)',
      stripCurves(curves(data, lay, data.encoders[0]), 'rho'),
      lay,
      curveLayers('rho', 'ρ', lay, [0, 1]),
    ),
  };
}

/** Final delta_rho against T per geometry, the best temperature (lowest delta_rho) marked. */
export function deltaRhoFigure(data: CorpusData, lay: Layout = layout(data)): Figure {
  const values = finalDeltaRho(data, lay);
  // Ticks at the sweep's temperatures, as written (one temperature would otherwise be labelled 0.700000).
  const x = {
    field: 'temperature',
    type: 'quantitative',
    title: 'temperature T',
    scale: { zero: false, nice: false, padding: 8 },
    axis: { values: lay.temperatures, format: '.4~g' },
  };
  const y = { field: 'delta_rho', type: 'quantitative', title: 'Δρ (final)' };
  // As the paper's Figure 10: system size is the colour, one size ladder per geometry (column) and prompt (row).
  const sizes = [...new Set(values.map((v) => v.n))].sort((a, b) => a - b);
  const color = {
    field: 'n',
    type: 'ordinal',
    title: 'N',
    scale: { domain: sizes, scheme: { name: 'viridis', extent: [0, 0.85] } },
    legend: LINE_LEGEND,
  };
  const ladders = [...new Set(lay.panels.map((p) => values.find((v) => v.panel === p)?.ladder).filter((l) => l !== undefined))];
  const layer = [
    { mark: { type: 'rule', color: '#999', strokeDash: [3, 3] }, encoding: { y: { datum: 0, type: 'quantitative' } } },
    {
      mark: { type: 'rule', opacity: 0.5 },
      encoding: { x, y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' }, color },
    },
    {
      mark: { type: 'line', point: { filled: true, size: 30 } },
      encoding: {
        x,
        y,
        color,
        detail: { field: 'n' },
        tooltip: [{ field: 'config_id' }, { field: 'n', title: 'N' }, { field: 'delta_rho', format: '.3f' }, { field: 'trials' }],
      },
    },
    {
      transform: [{ filter: 'datum.best' }],
      mark: { type: 'point', shape: 'diamond', size: 160, filled: true, color: '#d62728', stroke: 'black', strokeWidth: 0.5 },
      encoding: { x, y },
    },
    {
      transform: [{ filter: 'datum.best' }],
      mark: { type: 'text', dy: -12, fontSize: 10, fontWeight: 'bold', color: '#d62728' },
      encoding: { x, y, text: { field: 'temperature', type: 'quantitative', format: '', formatType: 'number' } },
    },
  ];
  return {
    id: 'delta-rho',
    title: 'Figure 10: Δρ against temperature, one size ladder per geometry, best temperature marked',
    caption:
      'Δρ = ρ(final sweep) − ρ(0) (docs/DESIGN.md#order-parameters: delta_rho(t) = rho(t) − rho(0), taken at the last sweep), the mean over trials with a bar of ± one standard error ' +
      `(SE = sd/√n over trials; no bar with a single trial), ` +
      'against temperature T (x), system size N as colour: one column per geometry (its size ladder), one row per prompt (and arm, where gridded). ' +
      'The red diamond (labelled with its T) marks the best temperature of each size: ' +
      'the lowest Δρ, i.e. the most hallucinations removed (or the fewest added) by the interaction.',
    spec: {
      $schema: SCHEMA,
      title: 'final Δρ against temperature',
      config: CONFIG,
      data: { values },
      facet: {
        row: { field: 'ladder', type: 'nominal', sort: ladders, title: null, header: { labelAngle: 0, labelAlign: 'left' } },
        column: { field: 'geometry', type: 'nominal', sort: lay.geometries, title: null },
      },
      spec: { ...PANEL, layer },
      resolve: { scale: { y: 'shared' } },
    } as unknown as TopLevelSpec,
  };
}

/** Phase space: cohesion against rho, one trajectory per configuration from t = 0 (circle) to the final sweep (dot). */
export function phaseSpaceFigure(data: CorpusData, encoder: string, lay: Layout = layout(data)): Figure {
  const values = curves(data, lay, encoder)
    .filter((p) => p.rho !== null && p.q !== null)
    .map((p) => ({
      config_id: p.config_id,
      panel: p.panel,
      geometry: p.geometry,
      temperature: p.temperature,
      sweep: p.sweep,
      rho: p.rho,
      q: p.q,
    }));
  const last = new Map<string, number>();
  for (const v of values) last.set(v.config_id, Math.max(last.get(v.config_id) ?? 0, v.sweep));
  const points = values.map((v) => ({ ...v, final: v.sweep === last.get(v.config_id) }));
  // As the paper's Figure 11: cohesion on x, ρ on y, so "right and down" is cohesion rising as hallucination falls.
  const x = { field: 'q', type: 'quantitative', title: 'cohesion q', scale: { zero: false, padding: 6 } };
  const y = { field: 'rho', type: 'quantitative', title: 'ρ', scale: { zero: false, padding: 6 } };
  const layer = [
    {
      mark: { type: 'line', strokeWidth: 1.4, opacity: 0.9 },
      encoding: { x, y, order: { field: 'sweep' }, color: temperatureColor(lay), detail: { field: 'config_id' } },
    },
    {
      transform: [{ filter: 'datum.sweep === 0' }],
      mark: { type: 'point', filled: false, size: 30, strokeWidth: 1.2 },
      encoding: { x, y, color: temperatureColor(lay) },
    },
    {
      transform: [{ filter: 'datum.final' }],
      mark: { type: 'point', filled: true, size: 36 },
      encoding: {
        x,
        y,
        color: temperatureColor(lay),
        tooltip: [{ field: 'config_id' }, { field: 'rho', format: '.3f' }, { field: 'q', format: '.3f' }],
      },
    },
  ];
  return {
    id: `phase-space-${encoder}`,
    title: `Figure 11: phase space, ρ against cohesion q, encoder ${encoder}`,
    caption:
      `hallucination density ρ (y) against cohesion q (x, encoder ${encoder}), one trajectory per configuration through sweeps t = 0, 1, ... (means over trials): ` +
      'moving right and down is cohesion rising as hallucination falls, right and up a shared error; ' +
      'from the open circle (t = 0) to the dot (the final sweep); colour is temperature. Sweeps where ρ is undefined (nothing judged correct or hallucinated) are left out.' +
      heldNote(data),
    spec: grid(`phase space ρ against q · encoder ${encoder}`, points, lay, layer),
  };
}

/** CDS_sys(t): the mean pairwise cosine distance of the raw embeddings (stored per snapshot, encoder by encoder). */
export function cdsFigure(data: CorpusData, encoder: string, lay: Layout = layout(data)): Figure {
  return {
    id: `cds-${encoder}`,
    title: `Context divergence CDS(t), encoder ${encoder}`,
    caption:
      `CDS_sys = the mean over pairs of agents of the cosine distance 1 − cos(x_i, x_j) between their raw (unwhitened) embeddings, encoder ${encoder}, ` +
      'of snapshot(t) against sweep t (the Context Divergence Score of the synchronisation literature; it falls as answers converge). ' +
      `Layout as the ordering curves: mean over trials; ${bandNote(data)}` +
      heldNote(data),
    spec: grid(
      `context divergence CDS(t) · encoder ${encoder}`,
      stripCurves(curves(data, lay, encoder), 'cds'),
      lay,
      curveLayers('cds', 'CDS', lay),
    ),
  };
}

/** Only the columns one curve figure draws, so the inlined data stays small. */
function stripCurves(points: CurvePoint[], field: 'm' | 'q' | 'rho' | 'cds'): object[] {
  return points.map((p) => ({
    config_id: p.config_id,
    panel: p.panel,
    geometry: p.geometry,
    temperature: p.temperature,
    sweep: p.sweep,
    trials: p.trials,
    held: p.held,
    [field]: p[field],
    [`${field}_lo`]: p[`${field}_lo`],
    [`${field}_hi`]: p[`${field}_hi`],
  }));
}
