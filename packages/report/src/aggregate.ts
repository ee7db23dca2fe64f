import { PROTOCOL_NAMES, geometryLabel, type GeometrySpec } from '@panta/core';
import type { OrderParamRow } from '@panta/corpus';
import type { CorpusData, RunInfo } from './corpus-data.js';
import { armColumns, armOf, type ArmColumn } from './arms.js';
import { seBand } from './stats.js';

/**
 * Figures put one geometry per column and one "panel" per row: a panel is everything else of a
 * configuration except temperature (prompt and N, plus each arm the sweep grids: protocol, dynamics,
 * template, population).
 */
export function panelLabel(run: RunInfo, arms: readonly ArmColumn[]): string {
  const arm = armOf(run, arms);
  return [run.prompt_id, `N=${run.n}`, ...(arm ? [arm] : [])].join(' · ');
}

/** A run's row of the temperature grid (Figure 10): its panel without the size, which is the colour there. */
export function ladderLabel(run: RunInfo, arms: readonly ArmColumn[]): string {
  const arm = armOf(run, arms);
  return [run.prompt_id, ...(arm ? [arm] : [])].join(' · ');
}

/** Protocols in the spec's order, then any other present (a corpus from another version), then the known rest. */
export function protocolOrder(data: CorpusData): string[] {
  const listed = (data.manifest.spec as { protocol?: string | string[] }).protocol;
  const spec = listed === undefined ? [] : Array.isArray(listed) ? listed : [listed];
  const present = [...new Set(data.runs.map((r) => r.protocol))];
  return [...new Set([...spec, ...present.sort(), ...PROTOCOL_NAMES])];
}

/** The layout of the grid: geometries (spec order), panels and temperatures (ascending). */
export interface Layout {
  geometries: string[];
  panels: string[];
  temperatures: number[];
  panelOf: Map<string, string>;
  runOf: Map<string, RunInfo>;
}

export function layout(data: CorpusData): Layout {
  const arms = armColumns(data);
  const specOrder: string[] = [];
  for (const g of ((data.manifest.spec as { geometries?: unknown[] }).geometries ?? []) as GeometrySpec[]) {
    try {
      specOrder.push(geometryLabel(g));
    } catch {
      // an unknown geometry object: its runs still appear, after the known ones
    }
  }
  const present = [...new Set(data.runs.map((r) => r.geometry))];
  const geometries = [...specOrder.filter((g) => present.includes(g)), ...present.filter((g) => !specOrder.includes(g))];
  const panelOf = new Map<string, string>();
  const runOf = new Map<string, RunInfo>();
  const protocols = protocolOrder(data);
  const sorted = [...data.runs].sort(
    (a, b) => a.prompt_id.localeCompare(b.prompt_id) || a.n - b.n || protocols.indexOf(a.protocol) - protocols.indexOf(b.protocol),
  );
  const panels: string[] = [];
  for (const r of sorted) {
    const p = panelLabel(r, arms);
    panelOf.set(r.run_id, p);
    runOf.set(r.run_id, r);
    if (!panels.includes(p)) panels.push(p);
  }
  const temperatures = [...new Set(data.runs.map((r) => r.temperature))].sort((a, b) => a - b);
  return { geometries, panels, temperatures, panelOf, runOf };
}

/** One point of an ordering curve: a configuration at sweep t, over its trials: the mean and the band mean ± one standard error (null with one trial). */
export interface CurvePoint {
  config_id: string;
  panel: string;
  geometry: string;
  temperature: number;
  sweep: number;
  trials: number;
  /** Of those trials, how many stopped early before t and count here with their last value (carried forward). */
  held: number;
  m: number | null;
  m_lo: number | null;
  m_hi: number | null;
  q: number | null;
  q_lo: number | null;
  q_hi: number | null;
  rho: number | null;
  rho_lo: number | null;
  rho_hi: number | null;
  /** CDS_sys: mean pairwise cosine distance of the raw embeddings. */
  cds: number | null;
  cds_lo: number | null;
  cds_hi: number | null;
}

/**
 * Order parameters of one encoder, averaged over trials per (configuration, sweep). A run that stopped early
 * has no rows after its last sweep: it counts with its last value at every later sweep its configuration's
 * longest run reached. The engine stopped it because m and rho had settled, so that value is its own estimate
 * of where it stays; averaging only the runs that reached t would instead make the mean jump as runs leave,
 * and the curve's end would not be the mean of the runs' final values that the tables and Δρ report.
 */
export function curves(data: CorpusData, lay: Layout, encoder: string): CurvePoint[] {
  const byRun = new Map<string, OrderParamRow[]>();
  for (const p of data.orderParams) {
    if (p.encoder !== encoder || !lay.runOf.has(p.run_id)) continue;
    const rows = byRun.get(p.run_id);
    if (rows) rows.push(p);
    else byRun.set(p.run_id, [p]);
  }
  const lastOfConfig = new Map<string, number>();
  for (const [runId, rows] of byRun) {
    rows.sort((a, b) => a.sweep - b.sweep);
    const c = lay.runOf.get(runId)!.config_id;
    lastOfConfig.set(c, Math.max(lastOfConfig.get(c) ?? 0, rows.at(-1)!.sweep));
  }
  const groups = new Map<string, { run: RunInfo; sweep: number; rows: OrderParamRow[]; held: number }>();
  const add = (run: RunInfo, sweep: number, row: OrderParamRow, held: boolean) => {
    const key = `${run.config_id}\u0000${sweep}`;
    const g = groups.get(key) ?? { run, sweep, rows: [], held: 0 };
    g.rows.push(row);
    if (held) g.held++;
    groups.set(key, g);
  };
  for (const [runId, rows] of byRun) {
    const run = lay.runOf.get(runId)!;
    for (const row of rows) add(run, row.sweep, row, false);
    const last = rows.at(-1)!;
    for (let t = last.sweep + 1; t <= lastOfConfig.get(run.config_id)!; t++) add(run, t, last, true);
  }
  const out: CurvePoint[] = [];
  for (const { run, sweep, rows, held } of groups.values()) {
    const m = seBand(rows.map((r) => r.magnetisation));
    const q = seBand(rows.map((r) => r.cohesion));
    const rho = seBand(rows.map((r) => r.rho));
    const cds = seBand(rows.map((r) => r.cds_sys));
    out.push({
      config_id: run.config_id,
      panel: lay.panelOf.get(run.run_id)!,
      geometry: run.geometry,
      temperature: run.temperature,
      sweep,
      trials: rows.length,
      held,
      m: m.mean,
      m_lo: m.lo,
      m_hi: m.hi,
      q: q.mean,
      q_lo: q.lo,
      q_hi: q.hi,
      rho: rho.mean,
      rho_lo: rho.lo,
      rho_hi: rho.hi,
      cds: cds.mean,
      cds_lo: cds.lo,
      cds_hi: cds.hi,
    });
  }
  return out.sort((a, b) => a.config_id.localeCompare(b.config_id) || a.sweep - b.sweep);
}

/** Each run's last sweep for one encoder. */
export function finalRows(data: CorpusData, encoder: string): Map<string, OrderParamRow> {
  const last = new Map<string, OrderParamRow>();
  for (const p of data.orderParams) {
    if (p.encoder !== encoder) continue;
    const before = last.get(p.run_id);
    if (!before || p.sweep > before.sweep) last.set(p.run_id, p);
  }
  return last;
}

/** Final delta_rho = rho(final sweep) - rho(0) of one configuration: mean over its trials, lo..hi = mean ± one standard error; `best` marks each cell's lowest. */
export interface DeltaRhoPoint {
  config_id: string;
  panel: string;
  /** The row of the temperature grid: the prompt and arm, every size in it (the paper's size ladder). */
  ladder: string;
  /** System size N: the colour of the temperature grid. */
  n: number;
  geometry: string;
  temperature: number;
  trials: number;
  delta_rho: number | null;
  lo: number | null;
  hi: number | null;
  best: boolean;
}

export function finalDeltaRho(data: CorpusData, lay: Layout): DeltaRhoPoint[] {
  const arms = armColumns(data);
  // rho comes from the judge tags, not the embeddings: every encoder's rows carry the same value.
  const last = finalRows(data, data.encoders[0]);
  const groups = new Map<string, { run: RunInfo; values: (number | null)[] }>();
  for (const [runId, row] of last) {
    const run = lay.runOf.get(runId);
    if (!run) continue;
    const g = groups.get(run.config_id) ?? { run, values: [] };
    g.values.push(row.delta_rho);
    groups.set(run.config_id, g);
  }
  const points: DeltaRhoPoint[] = [...groups.values()].map(({ run, values }) => {
    const band = seBand(values);
    return {
      config_id: run.config_id,
      panel: lay.panelOf.get(run.run_id)!,
      ladder: ladderLabel(run, arms),
      n: run.n,
      geometry: run.geometry,
      temperature: run.temperature,
      trials: values.length,
      delta_rho: band.mean,
      lo: band.lo,
      hi: band.hi,
      best: false,
    };
  });
  const cells = new Map<string, DeltaRhoPoint[]>();
  for (const p of points) {
    const key = `${p.panel}\u0000${p.geometry}`;
    cells.set(key, [...(cells.get(key) ?? []), p]);
  }
  for (const cell of cells.values()) {
    let best: DeltaRhoPoint | undefined;
    for (const p of cell) {
      if (p.delta_rho === null) continue;
      if (!best || p.delta_rho < best.delta_rho! || (p.delta_rho === best.delta_rho && p.temperature < best.temperature)) best = p;
    }
    if (best) best.best = true;
  }
  return points.sort((a, b) => a.config_id.localeCompare(b.config_id));
}
