import { driftStats, driftTolerance, snapshotAccuracy } from '@panta/core';
import type { Cell, Table } from './table.js';
import { finalRows, layout, protocolOrder, type Layout } from './aggregate.js';
import type { CorpusData, RunInfo } from './corpus-data.js';
import { earlyStoppingOn, savings, savingsNote } from './early-stopping.js';
import { armColumns, armNote, armOf, armsPresent, everyPromptNote, excluded, exclusionNote, pooledRuns } from './arms.js';
import { mean, spearman } from './stats.js';

/**
 * Table 9 of the paper: final cohesion per geometry and encoder (mean over the runs of the geometry: every
 * pooled prompt, size, temperature and trial), geometries by rising degree k, one block per arm.
 */
export function ladderTable(data: CorpusData, lay: Layout = layout(data)): Table {
  const finals = data.encoders.map((e) => finalRows(data, e));
  const arms = armColumns(data);
  const pooled = pooledRuns(data).filter((r) => finals[0].has(r.run_id));
  const rows: Cell[][] = [];
  for (const arm of armsPresent(pooled, arms)) {
    const block = lay.geometries.map((g, index) => {
      const runs = pooled.filter((r) => r.geometry === g && armOf(r, arms) === arm);
      const ks = [...new Set(runs.map((r) => r.k))].sort((a, b) => a - b);
      const kText = ks.length === 0 ? null : ks.length === 1 ? ks[0] : `${ks[0]}–${ks.at(-1)}`;
      return {
        k: mean(runs.map((r) => r.k)) ?? Infinity,
        index,
        runs: runs.length,
        cells: [
          ...(arms.length > 0 ? [arm] : []),
          g,
          kText,
          runs.length,
          ...finals.map((f) => mean(runs.map((r) => f.get(r.run_id)?.cohesion))),
          mean(runs.map((r) => finals[0].get(r.run_id)?.rho)),
        ] as Cell[],
      };
    });
    block.sort((a, b) => a.k - b.k || a.index - b.index);
    rows.push(...block.filter((r) => r.runs > 0).map((r) => r.cells));
  }
  return {
    id: 'geometry-ladder',
    title: 'Table 9: geometry ladder, final cohesion per geometry and encoder',
    caption:
      'cohesion q at the final sweep, the mean over every run of the geometry (sizes, temperatures and trials of the pooled prompts), one column per encoder; ' +
      'geometries by rising degree k (its range over sizes); the last column is the final hallucination density ρ, which does not depend on the encoder.' +
      exclusionNote(data) +
      ladderScopeNote(data) +
      armNote(data),
    columns: [...(arms.length > 0 ? ['arm'] : []), 'geometry', 'k', 'runs', ...data.encoders.map((e) => `q final (${e})`), 'ρ final'],
    rows,
    empty: 'No run is complete yet.',
  };
}

/**
 * The paper's Table 9 averages over its Prompts 2 to 6, leaving out Prompt 1 (its judge's labels were inverted);
 * prompt ids are the dataset's, so the scope is the spec's exclude_prompts or --exclude-prompts (fq117 of rheon6 is
 * the paper's Prompt 1).
 */
function ladderScopeNote(data: CorpusData): string {
  return excluded(data).length > 0
    ? ''
    : " The paper's Table 9 leaves out its Prompt 1 (the false-premise cube-sum question, fq117 in rheon6): exclude_prompts in the spec, or --exclude-prompts ID, gives that scope.";
}

/** Final cohesion per configuration (mean over trials) for one encoder, keyed by config_id. */
export function configCohesion(data: CorpusData, encoder: string, lay: Layout = layout(data)): Map<string, number> {
  const byConfig = new Map<string, number[]>();
  for (const [runId, row] of finalRows(data, encoder)) {
    const run = lay.runOf.get(runId);
    if (!run) continue;
    byConfig.set(run.config_id, [...(byConfig.get(run.config_id) ?? []), row.cohesion]);
  }
  return new Map([...byConfig].map(([c, qs]) => [c, mean(qs)!]));
}

/**
 * Table 10 of the paper: Spearman rank correlation of final cohesion between every pair of encoders, over
 * configuration-trial pairs (each run's own final cohesion, as the paper correlates them), one block per arm.
 */
export function robustnessTable(data: CorpusData): Table {
  const finals = data.encoders.map((e) => finalRows(data, e));
  const arms = armColumns(data);
  // The paper's Table 10 is over all configuration-trial pairs: every prompt, whatever --exclude-prompts leaves out.
  const pooled = data.runs;
  const rows: Cell[][] = [];
  for (const arm of armsPresent(pooled, arms)) {
    const runs = pooled.filter((r) => armOf(r, arms) === arm);
    for (let i = 0; i < data.encoders.length; i++) {
      for (let j = i + 1; j < data.encoders.length; j++) {
        const both = runs.filter((r) => finals[i].has(r.run_id) && finals[j].has(r.run_id));
        if (both.length === 0) continue;
        const rs = spearman(
          both.map((r) => finals[i].get(r.run_id)!.cohesion),
          both.map((r) => finals[j].get(r.run_id)!.cohesion),
        );
        rows.push([...(arms.length > 0 ? [arm] : []), data.encoders[i], data.encoders[j], both.length, rs]);
      }
    }
  }
  return {
    id: 'encoder-robustness',
    title: 'Table 10: encoder robustness, Spearman rank correlation of final cohesion',
    caption:
      "Spearman rank correlation ρ_s between two encoders of the final cohesion q over configuration-trial pairs (each run's q at its last sweep; ties get average ranks): " +
      '1 means both encoders order the runs the same way. n/a: fewer than two runs, or one encoder gives them all the same value.' +
      everyPromptNote(data, 'the pairs of') +
      armNote(data),
    columns: [...(arms.length > 0 ? ['arm'] : []), 'encoder A', 'encoder B', 'configuration-trial pairs', 'Spearman ρ_s'],
    rows,
    empty:
      data.encoders.length === 1
        ? `The sweep has one encoder (${data.encoders[0]}): there is no pair to correlate. List a second encoder under the spec's encoders (or add one with panta embed) to measure robustness.`
        : 'No run has order parameters yet.',
  };
}

/** The spec's drift tolerance setting (`auto` when the spec has none, as the engine reads it). */
function toleranceSetting(data: CorpusData): number | 'auto' {
  const t = (data.manifest.spec as { drift?: { tolerance?: unknown } }).drift?.tolerance;
  return typeof t === 'number' ? t : 'auto';
}

/**
 * Drift statistics of one run: from runs.parquet when the sweep finished, else from its accuracy series
 * (core's snapshotAccuracy and driftStats, with the tolerance the engine would use).
 */
function runDrift(data: CorpusData): Map<string, Pick<RunInfo, 'focus_total' | 'drift_onset' | 'recovered'>> {
  const out = new Map<string, Pick<RunInfo, 'focus_total' | 'drift_onset' | 'recovered'>>();
  const series = new Map<string, { sweep: number; accuracy: number | null }[]>();
  for (const p of data.orderParams) {
    if (p.encoder === data.encoders[0])
      series.set(p.run_id, [...(series.get(p.run_id) ?? []), { sweep: p.sweep, accuracy: snapshotAccuracy(p) }]);
  }
  const setting = toleranceSetting(data);
  for (const r of data.runs) {
    const s = series.get(r.run_id);
    if (!s) continue;
    if (!data.provisional) out.set(r.run_id, { focus_total: r.focus_total, drift_onset: r.drift_onset, recovered: r.recovered });
    else
      out.set(
        r.run_id,
        driftStats(
          s.sort((a, b) => a.sweep - b.sweep).map((x) => x.accuracy),
          driftTolerance(setting, r.n),
        ),
      );
  }
  return out;
}

/**
 * FOCUS, drift onset and recovery per prompt, geometry, temperature and arm (protocol and dynamics: arms are
 * never pooled; their columns show when the sweep grids them), over sizes and trials (docs/DESIGN.md#accuracy-focus-and-drift).
 */
export function driftTable(data: CorpusData, lay: Layout = layout(data)): Table {
  const drift = runDrift(data);
  const protocols = protocolOrder(data);
  // Every arm the sweep grids (protocol, dynamics, template, population): never pooled.
  const arms = armColumns(data);
  const groups = new Map<string, { run: RunInfo; ids: string[] }>();
  for (const r of data.runs) {
    if (!drift.has(r.run_id)) continue;
    const key = [r.prompt_id, lay.geometries.indexOf(r.geometry), r.temperature, armOf(r, arms)].join('\u0000');
    const g = groups.get(key) ?? { run: r, ids: [] };
    g.ids.push(r.run_id);
    groups.set(key, g);
  }
  const rows = [...groups.values()]
    .sort(
      (a, b) =>
        a.run.prompt_id.localeCompare(b.run.prompt_id) ||
        lay.geometries.indexOf(a.run.geometry) - lay.geometries.indexOf(b.run.geometry) ||
        a.run.temperature - b.run.temperature ||
        protocols.indexOf(a.run.protocol) - protocols.indexOf(b.run.protocol) ||
        armOf(a.run, arms).localeCompare(armOf(b.run, arms)),
    )
    .map(({ run, ids }): Cell[] => {
      const ds = ids.map((id) => drift.get(id)!);
      const drifted = ds.filter((d) => d.drift_onset !== null);
      return [
        run.prompt_id,
        run.geometry,
        String(run.temperature), // as written in the spec, not to 3 decimals
        ...arms.map((c) => c.value(run)),
        ids.length,
        mean(ds.map((d) => d.focus_total)),
        drifted.length,
        mean(drifted.map((d) => d.drift_onset)),
        drifted.length > 0 ? drifted.filter((d) => d.recovered).length / drifted.length : null,
      ];
    });
  const setting = toleranceSetting(data);
  return {
    id: 'drift',
    title: 'Drift statistics',
    caption:
      'per prompt, geometry, temperature and arm (protocol, dynamics, template, population, where gridded), over sizes and trials: accuracy(t) = #correct / #agents (not known and judge failures count as wrong); ' +
      'FOCUS = Σ_t (accuracy(t) − accuracy(t−1)) (the net accuracy gained over the sweeps, mean over runs); ' +
      `drifted = runs whose accuracy stays more than the tolerance (${setting === 'auto' ? '2/√N, four binomial standard errors of an accuracy over N agents' : setting}) below an earlier sweep's best for 2 or more consecutive sweeps; onset = the mean first sweep of that drift; ` +
      'recovery share = the share of drifted runs that later return to the pre-drift level (n/a when none drifted).' +
      (data.provisional
        ? ' Computed here from the provisional order parameters (runs.parquet has them once the sweep completes).'
        : ' From runs.parquet.'),
    columns: [
      'prompt',
      'geometry',
      'T',
      ...arms.map((c) => c.title),
      'runs',
      'FOCUS (mean)',
      'drifted runs',
      'drift onset (mean sweep)',
      'recovery share',
    ],
    rows,
    empty: 'No run is complete yet.',
  };
}

function sum(xs: (number | null)[]): number | null {
  const defined = xs.filter((x): x is number => x !== null);
  return defined.length > 0 ? defined.reduce((a, b) => a + b, 0) : null;
}

/** Calls, retries, tokens, cost and wall time per geometry, with the sweep's total; what early stopping saved when it was on. */
export function costTable(data: CorpusData, lay: Layout = layout(data)): Table {
  const early = earlyStoppingOn(data);
  const row = (label: string, runs: RunInfo[], planned = runs.length): Cell[] => {
    const s = savings(runs);
    return [
      label,
      `${runs.filter((r) => r.status === 'complete').length}/${planned}`,
      sum(runs.map((r) => r.events)),
      sum(runs.map((r) => r.calls)),
      sum(runs.map((r) => r.extra_calls)),
      sum(runs.map((r) => r.retries)),
      sum(runs.map((r) => r.prompt_tokens)),
      sum(runs.map((r) => r.completion_tokens)),
      sum(runs.map((r) => r.cost)),
      (() => {
        const ms = sum(runs.map((r) => r.wall_ms));
        return ms === null ? null : ms / 1000;
      })(),
      ...(early ? [s.stopped, s.saved, s.percent] : []),
    ];
  };
  const rows = lay.geometries.map((g) =>
    row(
      g,
      data.runs.filter((r) => r.geometry === g),
    ),
  );
  rows.push(row('total', data.runs, Math.max(data.runs.length, data.manifest.runs.planned)));
  const backend = data.manifest.backend;
  const hasPrice = data.runs.some((r) => r.cost !== null);
  return {
    id: 'cost',
    title: 'Cost',
    caption:
      `LLM calls of every role (the agents' answers and the coordination protocols' merge, judge and moderator calls; retries included), ` +
      `the extra calls among them, retries, tokens (every role) and wall time per geometry (backend ${backend.kind}, model ${backend.model}); ` +
      `events counts answers only. The LLM judge made ${data.manifest.usage?.judge_calls ?? 0} calls in the last session. ` +
      (hasPrice
        ? "Cost is in the currency of the backend's price table. "
        : 'Cost: n/a, the backend has no price table (`price` in the spec). ') +
      savingsNote(data) +
      (data.manifest.status === 'complete'
        ? ''
        : ' The corpus is incomplete: runs.parquet counts what was written when a session last ended.'),
    columns: [
      'geometry',
      'runs complete',
      'events',
      'calls',
      'extra calls',
      'retries',
      'prompt tokens',
      'completion tokens',
      'cost',
      'wall time (s, summed over runs)',
      ...(early ? ['runs stopped early', 'calls saved by early stopping', 'calls saved (%)'] : []),
    ],
    rows,
  };
}
