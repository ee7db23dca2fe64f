import type { RunPlan } from '@panta/core';
import type { Manifest, OrderParamRow } from '@panta/corpus';

/** One row of the table the CLI prints: final order parameters averaged over trials. */
export interface SummaryRow {
  prompt_id: string;
  geometry: string;
  n: number;
  temperature: number;
  protocol: string;
  runs: number;
  /** Mean last sweep of the runs (below the spec's sweeps when runs stopped early). */
  last_sweep: number;
  magnetisation: number;
  cohesion: number;
  rho: number | null;
}

export interface SweepSummary {
  out: string;
  /** `stopped`: interrupted on request; written events are durable and the same command resumes. */
  status: Manifest['status'] | 'stopped';
  runsComplete: number;
  runsPlanned: number;
  failed: string[];
  eventsWritten: number;
  /** Over the first encoder. */
  final: SummaryRow[];
}

/** The last snapshot of each run (of `encoder`), averaged over the runs of one configuration (its trials). */
export function summariseFinal(runs: readonly RunPlan[], rows: readonly OrderParamRow[], encoder: string): SummaryRow[] {
  const last = new Map<string, OrderParamRow>();
  for (const r of rows) if (r.encoder === encoder) last.set(r.run_id, r);
  const groups = new Map<string, { plan: RunPlan; rows: OrderParamRow[] }>();
  for (const plan of runs) {
    const row = last.get(plan.runId);
    if (!row) continue;
    const key = `${plan.prompt.id}|${plan.geometryLabel}|${plan.n}|${plan.temperature}|${plan.protocol}`;
    const g = groups.get(key) ?? { plan, rows: [] };
    g.rows.push(row);
    groups.set(key, g);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return [...groups.values()].map(({ plan, rows: rs }) => {
    const rhos = rs.map((r) => r.rho).filter((x): x is number => x !== null);
    return {
      prompt_id: plan.prompt.id,
      geometry: plan.geometryLabel,
      n: plan.n,
      temperature: plan.temperature,
      protocol: plan.protocol,
      runs: rs.length,
      last_sweep: mean(rs.map((r) => r.sweep)),
      magnetisation: mean(rs.map((r) => r.magnetisation)),
      cohesion: mean(rs.map((r) => r.cohesion)),
      rho: rhos.length > 0 ? mean(rhos) : null,
    };
  });
}
