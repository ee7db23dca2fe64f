import type { RunColumns } from '../event.js';
import type { ArmObservation } from './arm-stats.js';

/**
 * What a run contributes to the arm statistics: one value per metric, read from its runs.parquet row and
 * its order parameters. The engine (stats.parquet at finish) and the report both call this, so the file
 * and the report's tables are one computation.
 */

/** The per-trial metrics compared between arms, in table order. */
export const ARM_METRICS = ['rho_final', 'delta_rho_final', 'cds_sys_final', 'cds_sys_max', 'calls', 'focus_total'] as const;

/** What each metric is, for captions and the README. */
export const ARM_METRIC_TITLES: Record<(typeof ARM_METRICS)[number], string> = {
  rho_final: 'hallucination density ρ at the last sweep (the paper’s HR: hallucinated over correct + hallucinated)',
  delta_rho_final: 'Δρ at the last sweep (ρ(t) − ρ(0))',
  cds_sys_final: 'CDS_sys at the last sweep',
  cds_sys_max: 'the largest CDS_sys over the run’s sweeps',
  calls: 'LLM calls per trial (agent answers plus protocol calls)',
  focus_total: 'FOCUS summed over the run (accuracy(last) − accuracy(0))',
};

/** The runs.parquet columns the statistics read. */
export interface RunForStats extends RunColumns {
  dynamics: string | null;
  template_arm: string | null;
  population_arm: string | null;
  status: string;
  events: number;
  extra_calls: number | null;
  focus_total: number | null;
}

/** The order-parameter columns the statistics read. */
export interface SnapshotForStats {
  run_id: string;
  sweep: number;
  encoder: string;
  rho: number | null;
  delta_rho: number | null;
  cds_sys: number;
}

const ARM_FIELDS = [
  (r: RunForStats) => r.protocol,
  (r: RunForStats) => r.dynamics ?? 'asynchronous',
  (r: RunForStats) => r.template_arm ?? '',
  (r: RunForStats) => r.population_arm ?? '',
] as const;

/**
 * One observation per complete run. The arm is the arm columns that vary among the runs, joined by ' · '
 * (one arm, '', when none varies); the cell is the rest of the configuration (prompt, geometry, N, k, T).
 * CDS is read on `encoder` (rho does not depend on the encoder).
 */
export function armObservations(runs: readonly RunForStats[], snapshots: readonly SnapshotForStats[], encoder: string): ArmObservation[] {
  const complete = runs.filter((r) => r.status === 'complete');
  const varying = ARM_FIELDS.filter((f) => new Set(complete.map(f)).size > 1);
  const byRun = new Map<string, SnapshotForStats[]>();
  for (const s of snapshots) {
    if (s.encoder !== encoder) continue;
    const list = byRun.get(s.run_id);
    if (list) list.push(s);
    else byRun.set(s.run_id, [s]);
  }
  return complete.map((r) => {
    const series = (byRun.get(r.run_id) ?? []).slice().sort((a, b) => a.sweep - b.sweep);
    const last = series[series.length - 1];
    return {
      cell: `${r.prompt_id} · ${r.geometry} · N=${r.n} · k=${r.k} · T=${r.temperature}`,
      arm: varying.map((f) => f(r)).join(' · '),
      metrics: {
        rho_final: last?.rho ?? null,
        delta_rho_final: last?.delta_rho ?? null,
        cds_sys_final: last?.cds_sys ?? null,
        cds_sys_max: series.length > 0 ? Math.max(...series.map((s) => s.cds_sys)) : null,
        calls: r.events + (r.extra_calls ?? 0),
        focus_total: r.focus_total,
      },
    };
  });
}
