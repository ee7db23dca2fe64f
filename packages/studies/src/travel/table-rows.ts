import type { RunPlan } from '@panta/core';
import type { TravelJudge } from './judged.js';
import { finalItinerary, type TravelEventRow, travelRunMeasures } from './run-measures.js';
import { queryRows, readParquetSql, shardPath } from '@panta/corpus';
import { hasTcs } from './measures.js';
import type { TravelTableRow } from './table-schema.js';

/** Whether a run is a travel run: its prompt carries checkable assertions. */
export function isTravelRun(run: RunPlan): boolean {
  return run.prompt.assertions !== undefined;
}

/** The shard rows the travel measures read, per run id, in event order. */
export async function travelEventRows(out: string, travel: readonly RunPlan[]): Promise<Map<string, TravelEventRow[]>> {
  const byRun = new Map<string, TravelEventRow[]>();
  if (travel.length === 0) return byRun;
  for (const r of await queryRows(
    `SELECT run_id, role, sweep, response, divergence FROM ${readParquetSql(travel.map((t) => shardPath(out, t.runId)))} ORDER BY run_id, event, role`,
  )) {
    const row: TravelEventRow = {
      role: String(r.role),
      sweep: Number(r.sweep),
      response: String(r.response ?? ''),
      divergence: r.divergence === null || r.divergence === undefined ? null : Number(r.divergence),
    };
    const id = String(r.run_id);
    const list = byRun.get(id);
    if (list) list.push(row);
    else byRun.set(id, [row]);
  }
  return byRun;
}

/**
 * travel.parquet's rows: the measures of the given complete travel runs, read back from their shards, in
 * order. With `judge` (the sweep's LLM judge) HR and TCS are its verdicts, asked for every answer first.
 */
export async function travelTableRows(out: string, complete: readonly RunPlan[], judge?: TravelJudge): Promise<TravelTableRow[]> {
  const travel = complete.filter(isTravelRun);
  if (travel.length === 0) return [];
  const byRun = await travelEventRows(out, travel);
  const judgement = judge
    ? await judge.judgeAll(
        travel.map((run) => {
          const answers = (byRun.get(run.runId) ?? []).filter((r) => r.role === 'agent');
          const last = Math.max(-1, ...answers.map((r) => r.sweep));
          return {
            prompt: run.prompt,
            answers: answers.map((r) => r.response),
            itineraries:
              last < 0 || !hasTcs(run.prompt) ? [] : [finalItinerary(answers.filter((r) => r.sweep === last).map((r) => r.response))],
          };
        }),
      )
    : null;
  return travel.map((run) => ({
    run_id: run.runId,
    config_id: run.configId,
    trial: run.trial,
    prompt_id: run.prompt.id,
    protocol: run.protocol,
    ...travelRunMeasures(
      run.prompt,
      byRun.get(run.runId) ?? [],
      run.sweeps,
      judgement ? { verdicts: (a) => judgement.verdicts(run.prompt, a), tcs: (a) => judgement.tcs(run.prompt, a) } : undefined,
      { protocol: run.protocol, n: run.n },
    ),
    judge: judge?.model ?? 'reference',
  }));
}
