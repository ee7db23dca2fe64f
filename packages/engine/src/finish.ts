import { existsSync } from 'node:fs';
import type { EncoderColumn } from '@panta/core';
import {
  ORDER_PARAMS_TABLE,
  computePhaseRows,
  measureSweep,
  orderParamsPath,
  readRunRecords,
  shardPath,
  writeParquetTable,
  writePhaseTable,
  type Manifest,
  type SweepTrace,
} from '@panta/corpus';
import { LlmJudge, type Judge } from '@panta/judge';
import { writeAddedTables } from './added-tables.js';
import { fileChecksums, listedFiles } from './checksums.js';
import type { LoadedSweep } from './load.js';
import { writeFinalManifest } from './manifest-final.js';
import { runTableRows, writeRunTable } from './run-table.js';
import { statsTableRows, writeStatsTable } from './stats-table.js';
import { summariseFinal, type SweepSummary } from './sweep-summary.js';
import { teamDriftByRun, teamTableRows, writeTeamTable } from './team-table.js';
import { costOf, shardTotals, usageTotals } from './totals.js';
import { whiteningMode } from './whitening-source.js';

export { batchInvariant, backendMeta, codeVersion, judgeMeta, startManifest, sweepMeta, type SweepMeta } from './manifest-start.js';
export type { SummaryRow, SweepSummary } from './sweep-summary.js';

/**
 * Closes a sweep: runs.parquet always (with each run's status); once every run is complete, whitening and
 * order_params.parquet too; then the manifest with counts and checksums. `trace` (the sweep's, see
 * SweepCorpus) spares reading back the embeddings of the runs it holds. A part of a job array (sweep.shard)
 * is never measured: the whitening pools every part's t = 0 answers, so `panta merge` measures, through
 * this same function. `judge` is the sweep's judge, or the LLM judge's calls when a merge adds them up.
 */
export async function finishSweep(
  sweep: LoadedSweep,
  manifest: Manifest,
  encoders: readonly EncoderColumn[],
  judge: Judge | { calls: number; judge?: Judge },
  trace?: SweepTrace,
): Promise<SweepSummary> {
  const { out, runs } = sweep;
  const records = readRunRecords(out);
  const complete = runs.filter((r) => existsSync(shardPath(out, r.runId)));
  const failed = runs.filter((r) => !existsSync(shardPath(out, r.runId)) && records.get(r.runId)?.status === 'failed').map((r) => r.runId);
  const allDone = complete.length === runs.length;
  const measure = allDone && !sweep.shard;
  const shards = complete.map((r) => shardPath(out, r.runId));
  const { perRun: totals, tags } = await shardTotals(shards);
  const measured = measure
    ? await measureSweep(
        out,
        runs.map((r) => ({ runId: r.runId, configId: r.configId, n: r.n, promptId: r.prompt.id })),
        encoders,
        whiteningMode(sweep.spec, sweep.specFile),
        true,
        trace,
      )
    : null;
  const orderParams = measured?.orderParams ?? [];
  const first = encoders[0].name;
  const { priced, cost } = costOf(sweep.spec.backend);
  const teamRows = await teamTableRows(out, complete);
  const runRows = runTableRows({
    runs,
    totals,
    records,
    failed,
    orderParams,
    encoder: first,
    tolerance: sweep.spec.drift?.tolerance ?? 'auto',
    cost,
    teamDrift: teamDriftByRun(teamRows),
  });
  await writeRunTable(out, runRows);
  if (measure) await writeParquetTable(orderParamsPath(out), ORDER_PARAMS_TABLE, orderParams);
  const statsFile = measure ? await writeStatsTable(out, statsTableRows(runRows, orderParams, controlEncoderName(sweep, first))) : null;
  const phaseFile = measure ? await writePhaseTable(out, await computePhaseRows(out, runs, orderParams, encoders)) : null;
  const teamsFile = await writeTeamTable(out, runs, teamRows);
  // The LLM judge scores what a study's table scores (its calls counted below); a merge of parts, which
  // holds only the parts' call counts, leaves it to the table's own check, and the table says so.
  // The first of K collector shards passes its own judge beside the other shards' calls.
  const own = judge instanceof LlmJudge ? judge : 'judge' in judge && judge.judge instanceof LlmJudge ? judge.judge : undefined;
  const addedFiles = measure ? await writeAddedTables(out, runs, complete, own) : [];
  const files = await fileChecksums(out, [
    ...listedFiles(out, shards, measure ? { promptIds: new Set(runs.map((r) => r.prompt.id)), encoders } : null),
    ...(statsFile ? [statsFile] : []),
    ...(phaseFile ? [phaseFile] : []),
    ...(teamsFile ? [teamsFile] : []),
    ...addedFiles,
  ]);
  const eventsWritten = [...totals.values()].reduce((s, t) => s + t.events, 0);
  const status: Manifest['status'] = allDone ? 'complete' : failed.length > 0 ? 'failed' : 'running';
  // Calls of this process's judge (a study table's rubrics included), and those other processes made.
  const judgeCalls = (own?.stats.calls ?? 0) + (judge instanceof LlmJudge ? 0 : 'calls' in judge ? judge.calls : 0);
  writeFinalManifest(out, manifest, {
    status,
    runs: { planned: runs.length, complete: complete.length, failed },
    eventsWritten,
    tags,
    usage: usageTotals(runRows, priced, judgeCalls),
    files,
  });
  return {
    out,
    status,
    runsComplete: complete.length,
    runsPlanned: runs.length,
    failed,
    eventsWritten,
    final: summariseFinal(runs, orderParams, first),
  };
}

/** The encoder CDS is compared on: the one ssvp's gate reads (ssvp.encoder), else the first. */
function controlEncoderName(sweep: LoadedSweep, first: string): string {
  return (sweep.spec as { ssvp?: { encoder?: string } }).ssvp?.encoder ?? first;
}
