import { existsSync } from 'node:fs';
import { formatEstimate, phaseDiagram, type PhaseFamily } from '@panta/core';
import { phaseTablePath, readPhaseTable, type PhaseRow } from '@panta/corpus';
import type { CorpusData } from './corpus-data.js';
import type { Figure } from './figure.js';
import { CONFIG, LINE_LEGEND, PANEL, SCHEMA } from './figure-style.js';
import type { Cell, Table } from './table.js';

/**
 * The phase section (docs/DESIGN.md#phase): phase.parquet's fluctuation measures per configuration, the Binder
 * cumulant against temperature per size, the transition temperatures of `panta phase` and a phase diagram
 * (temperature against the geometry ladder, m and rho shaded). Corpora without phase.parquet have no section.
 */
export interface PhaseSource {
  rows: PhaseRow[];
  diagram: PhaseFamily[];
  /** Geometries by rising mean degree k (the ladder), then in the order the sweep lists them. */
  ladder: string[];
}

/** phase.parquet's rows and their diagram, or null when the corpus has none (or only team runs). */
export async function loadPhase(data: CorpusData): Promise<PhaseSource | null> {
  if (!existsSync(phaseTablePath(data.dir))) return null;
  const rows = await readPhaseTable(data.dir);
  if (rows.length === 0) return null;
  const geometries = [...new Set(rows.map((r) => r.geometry))];
  const k = (g: string) => {
    const ks = data.runs.filter((r) => r.geometry === g).map((r) => r.k);
    return ks.length ? ks.reduce((a, b) => a + b, 0) / ks.length : Infinity;
  };
  const ladder = geometries.map((g, i) => ({ g, i, k: k(g) })).sort((a, b) => a.k - b.k || a.i - b.i);
  return { rows, diagram: phaseDiagram(rows), ladder: ladder.map((l) => l.g) };
}

const interval = (lo: number | null, hi: number | null): string | null =>
  lo === null || hi === null ? null : `[${lo.toPrecision(3)}, ${hi.toPrecision(3)}]`;

/** Every configuration's fluctuation measures, as phase.parquet holds them. */
export function fluctuationsTable({ rows }: PhaseSource): Table {
  return {
    id: 'fluctuations',
    title: 'Fluctuation measures per configuration',
    caption:
      'From each configuration\'s trials, every snapshot of the plateau (sweeps from ceil(T/2), the "from" column) one sample: ' +
      'susceptibility χ = N(⟨m²⟩ − ⟨m⟩²) and Binder cumulant U = 1 − n⟨m⁴⟩/((n + 2)⟨m²⟩²) for spin dimension n, the same pair for the ' +
      'factual spin f = 1 − 2ρ (n = 1), with 95% bootstrap intervals over trials (none below two trials); τ is the integrated ' +
      "autocorrelation time in sweeps (mean over trials); ξ the second-moment correlation length over graph distance on each trial's last snapshot (lattices only). 'no' under equilibrated: the plateau's halves differ by more than 3 " +
      "standard errors, and the configuration's numbers are not used for a transition estimate. ρ is the sweep judge's.",
    columns: [
      'prompt',
      'encoder',
      'geometry',
      'N',
      'T',
      'trials',
      'from',
      'n',
      'm',
      'χ_m',
      'χ_m 95%',
      'U_m',
      'U_m 95%',
      'ρ',
      'χ_ρ',
      'U_ρ',
      'τ_m',
      'τ_ρ',
      'ξ',
      'equilibrated',
    ],
    rows: rows.map((r): Cell[] => [
      r.prompt_id,
      r.encoder,
      r.geometry,
      r.n,
      r.temperature,
      r.trials,
      r.plateau_from,
      r.spin_dim,
      r.m,
      r.chi_m,
      interval(r.chi_m_lo, r.chi_m_hi),
      r.binder_m,
      interval(r.binder_m_lo, r.binder_m_hi),
      r.rho,
      r.chi_rho,
      r.binder_rho,
      r.tau_m,
      r.tau_rho,
      r.xi,
      r.equilibrated ? 'yes' : 'no',
    ]),
    empty: 'No configuration has order parameters.',
  };
}

/** `panta phase`'s estimates: T_c from Binder crossings and chi peaks, and T* per size, per family. */
export function phaseEstimatesTable({ diagram }: PhaseSource): Table {
  return {
    id: 'phase-estimates',
    title: 'Transition temperatures and T*',
    caption:
      'Per geometry, prompt and encoder (as panta phase prints them): T_c where the Binder cumulants of the two largest sizes cross ' +
      '(the larger size ordered below, disordered above; linear interpolation, the interval where their difference is within 1.96 ' +
      'standard errors), T_c at the susceptibility peak of the largest size, and T*, the temperature of lowest ρ, per size (the vertex ' +
      'of the parabola through the extreme grid point and its neighbours; the interval reaches the nearest points not within errors). ' +
      '"none" says why the data give no number.',
    columns: ['geometry', 'prompt', 'encoder', 'sizes', 'T_c (Binder)', 'T_c (χ peak)', 'T* per size'],
    rows: diagram.map((f): Cell[] => [
      f.geometry,
      f.prompt_id,
      f.encoder,
      f.sizes.join(', '),
      formatEstimate(f.tc_binder),
      formatEstimate(f.tc_chi),
      f.t_star.map((s) => `N=${s.n}: ${formatEstimate(s)}`).join('; '),
    ]),
    empty: 'No configuration has order parameters.',
  };
}

/** The Binder cumulant of m against T, one line per size, a panel per geometry (columns) and prompt (rows). */
export function binderFigure({ rows, ladder }: PhaseSource, encoder: string): Figure | null {
  const values = rows
    .filter((r) => r.encoder === encoder && r.binder_m !== null)
    .map((r) => ({
      prompt: r.prompt_id,
      geometry: r.geometry,
      n: r.n,
      temperature: r.temperature,
      binder: r.binder_m,
      lo: r.binder_m_lo ?? r.binder_m,
      hi: r.binder_m_hi ?? r.binder_m,
      equilibrated: r.equilibrated,
    }));
  if (values.length === 0) return null;
  const sizes = [...new Set(values.map((v) => v.n))].sort((a, b) => a - b);
  const x = { field: 'temperature', type: 'quantitative', title: 'temperature T', scale: { zero: false, nice: false } };
  const color = {
    field: 'n',
    type: 'ordinal',
    title: 'N',
    scale: { domain: sizes, scheme: { name: 'viridis', extent: [0, 0.85] } },
    legend: LINE_LEGEND,
  };
  return {
    id: `binder-${encoder}`,
    title: `Binder cumulant U(T) per size (${encoder})`,
    caption:
      `Binder cumulant U = 1 − n⟨m⁴⟩/((n + 2)⟨m²⟩²) of the magnetisation on encoder ${encoder}'s spins against T, one line per size N, ` +
      'bars the 95% bootstrap interval over trials; hollow points are configurations not on their plateau. Where the curves of two sizes ' +
      'cross (the larger size above on the cold side, below on the hot side) is the transition temperature of the phase estimates table.',
    spec: {
      $schema: SCHEMA,
      title: `Binder cumulant U(T), ${encoder}`,
      data: { values },
      facet: {
        column: { field: 'geometry', type: 'nominal', title: null, sort: ladder },
        row: { field: 'prompt', type: 'nominal', title: null },
      },
      spec: {
        ...PANEL,
        layer: [
          { mark: { type: 'rule', opacity: 0.5 }, encoding: { x, y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' }, color } },
          {
            mark: { type: 'line', point: false },
            encoding: { x, y: { field: 'binder', type: 'quantitative', title: 'U' }, color, detail: { field: 'n' } },
          },
          {
            mark: { type: 'point', size: 30 },
            encoding: {
              x,
              y: { field: 'binder', type: 'quantitative' },
              color,
              fill: { condition: { test: 'datum.equilibrated', field: 'n', type: 'ordinal' }, value: 'white' },
              tooltip: [{ field: 'n', title: 'N' }, { field: 'temperature' }, { field: 'binder', format: '.3f' }],
            },
          },
        ],
      },
      resolve: { scale: { y: 'shared' } },
      config: CONFIG,
    } as Figure['spec'],
  };
}

/** Each temperature's band on the T axis: from the midpoint with the one below to the midpoint with the one above. */
function bands(ts: readonly number[]): Map<number, [number, number]> {
  const s = [...new Set(ts)].sort((a, b) => a - b);
  const half = (i: number) => (s.length > 1 ? (i === 0 ? (s[1] - s[0]) / 2 : (s[i] - s[i - 1]) / 2) : 0.05);
  return new Map(s.map((t, i) => [t, [t - half(i), t + (i === s.length - 1 ? half(i) : (s[i + 1] - t) / 2)]]));
}

/**
 * The phase diagram: temperature against the geometry ladder, shaded by m (left) and rho (right) at each
 * geometry's largest size (first encoder, mean over trials' plateaus), T_c (Binder) marked on m and T* on rho.
 */
export function phaseDiagramFigure({ rows, diagram, ladder }: PhaseSource): Figure | null {
  const encoder = rows[0]?.encoder;
  const own = rows.filter((r) => r.encoder === encoder);
  const largest = new Map<string, number>();
  for (const r of own) largest.set(r.geometry, Math.max(largest.get(r.geometry) ?? 0, r.n));
  const band = bands(own.map((r) => r.temperature));
  const cells = own
    .filter((r) => r.n === largest.get(r.geometry))
    .flatMap((r) =>
      [
        ['m', r.m],
        ['ρ', r.rho],
      ].map(([measure, value]) => ({
        kind: 'cell',
        measure,
        geometry: r.geometry,
        t0: band.get(r.temperature)![0],
        t1: band.get(r.temperature)![1],
        value,
      })),
    )
    .filter((c) => c.value !== null);
  const marks = diagram
    .filter((f) => f.encoder === encoder)
    .flatMap((f) => {
      const star = f.t_star.find((s) => s.n === largest.get(f.geometry));
      return [
        { kind: 'mark', measure: 'm', label: 'T_c (Binder)', geometry: f.geometry, t: f.tc_binder.t },
        { kind: 'mark', measure: 'ρ', label: 'T*', geometry: f.geometry, t: star?.t ?? null },
      ].filter((m) => m.t !== null);
    });
  if (cells.length === 0) return null;
  const x = { field: 'geometry', type: 'nominal', title: 'geometry (rising k)', sort: ladder, scale: { domain: ladder } };
  return {
    id: 'phase-diagram',
    title: 'Phase diagram: temperature against the geometry ladder',
    caption:
      `m (left) and ρ (right) on the plateau at each geometry's largest size (encoder ${encoder}), geometries by rising degree k; ` +
      'white diamonds: T_c where the Binder cumulants of the two largest sizes cross (on m) and T*, the temperature of lowest ρ, ' +
      'at the largest size (on ρ). A geometry without a marker has no estimate (panta phase says why).',
    spec: {
      $schema: SCHEMA,
      title: 'phase diagram',
      data: { values: [...cells, ...marks] },
      facet: { column: { field: 'measure', type: 'nominal', title: null, sort: ['m', 'ρ'] } },
      spec: {
        width: Math.max(PANEL.width, 40 * ladder.length),
        height: 200,
        layer: [
          {
            transform: [{ filter: "datum.kind === 'cell'" }],
            mark: { type: 'rect' },
            encoding: {
              x,
              y: { field: 't0', type: 'quantitative', title: 'temperature T', scale: { zero: false, nice: false } },
              y2: { field: 't1' },
              color: {
                field: 'value',
                type: 'quantitative',
                title: 'm, ρ',
                scale: { type: 'quantize', domain: [0, 1], range: ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'] },
              },
              tooltip: [{ field: 'geometry' }, { field: 'measure' }, { field: 'value', format: '.3f' }],
            },
          },
          {
            transform: [{ filter: "datum.kind === 'mark'" }],
            mark: { type: 'point', shape: 'diamond', size: 120, filled: true, color: 'white', stroke: 'black', strokeWidth: 1 },
            encoding: { x, y: { field: 't', type: 'quantitative' }, tooltip: [{ field: 'label' }, { field: 't', format: '.4~g' }] },
          },
        ],
      },
      config: CONFIG,
    } as Figure['spec'],
  };
}
