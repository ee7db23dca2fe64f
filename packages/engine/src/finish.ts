import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { driftStats, driftTolerance, focusSeries, runEvents, snapshotAccuracy, sweepEvents, type EncoderColumn, type RunPlan, type SweepSpec } from '@panta/core';
import {
  CORPUS_FORMAT,
  ORDER_PARAM_COLUMNS,
  measureSweep,
  shardPath,
  queryRows,
  readParquetSql,
  readRunRecords,
  sha256File,
  writeManifest,
  writeParquetTable,
  type Manifest,
  type OrderParamRow,
  type SweepTrace,
} from '@panta/corpus';
import type { Encoder } from '@panta/embed';
import { LlmJudge, type Judge } from '@panta/judge';
import type { LlmBackend } from '@panta/llm';
import type { LoadedSweep } from './load.js';

/** The code's version, in the manifest from the sweep's start (a report of a running sweep shows it). */
export function codeVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** The manifest as the sweep starts (or resumes): status running, nothing counted yet. */
export function startManifest(sweep: LoadedSweep, previous: Manifest | null, backend: LlmBackend, judge: Judge, encoders: readonly Encoder[]): Manifest {
  const now = new Date().toISOString();
  const manifest: Manifest = {
    format: CORPUS_FORMAT,
    name: sweep.spec.name,
    status: 'running',
    fingerprint: sweep.fingerprint,
    spec_file: sweep.specFile,
    spec: sweep.spec,
    code: { panta: codeVersion(), node: process.version },
    seed: sweep.spec.seed ?? 0,
    backend: { kind: backend.kind, model: backend.model, batch_invariant: batchInvariant(sweep.spec.backend) },
    judge: { kind: sweep.spec.judge.kind, model: judge.model },
    encoders: encoders.map((e, i) => ({ name: e.name, kind: sweep.spec.encoders[i]!.kind, dim: e.dim, model: e.model })),
    prompts: sweep.prompts,
    runs: { planned: sweep.runs.length, complete: 0, failed: [] },
    events: { planned: sweepEvents(sweep.runs), written: 0 },
    tags: {},
    usage: { calls: 0, retries: 0, prompt_tokens: 0, completion_tokens: 0, cost: null, judge_calls: 0 },
    files: {},
    ...(sweep.shard ? { shard: { index: sweep.shard.index, count: sweep.shard.count, measured_by: 'panta merge' as const } } : {}),
    started_at: previous?.started_at ?? now,
    updated_at: now,
  };
  writeManifest(sweep.out, manifest);
  return manifest;
}

/** What the manifest says of batch invariance: the spec's word, the surrogate's by construction, else unknown. */
export function batchInvariant(backend: SweepSpec['backend']): boolean | null {
  return backend.kind === 'surrogate' ? true : (backend.batch_invariant ?? null);
}

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

export const RUN_COLUMNS = [
  { name: 'run_id', type: 'VARCHAR' },
  { name: 'config_id', type: 'VARCHAR' },
  { name: 'trial', type: 'INTEGER' },
  { name: 'prompt_id', type: 'VARCHAR' },
  { name: 'geometry', type: 'VARCHAR' },
  { name: 'n', type: 'INTEGER' },
  { name: 'k', type: 'INTEGER' },
  { name: 'temperature', type: 'DOUBLE' },
  { name: 'protocol', type: 'VARCHAR' },
  { name: 'dynamics', type: 'VARCHAR' },
  { name: 'seed', type: 'BIGINT' },
  { name: 'status', type: 'VARCHAR' },
  { name: 'events', type: 'BIGINT' },
  { name: 'calls', type: 'BIGINT' },
  { name: 'retries', type: 'BIGINT' },
  { name: 'prompt_tokens', type: 'BIGINT' },
  { name: 'completion_tokens', type: 'BIGINT' },
  { name: 'cost', type: 'DOUBLE' },
  { name: 'extra_calls', type: 'BIGINT' },
  { name: 'stopped_early', type: 'BOOLEAN' },
  { name: 'sweeps_run', type: 'INTEGER' },
  { name: 'calls_saved', type: 'BIGINT' },
  { name: 'focus', type: 'DOUBLE[]' },
  { name: 'focus_total', type: 'DOUBLE' },
  { name: 'drift_tolerance', type: 'DOUBLE' },
  { name: 'drift_onset', type: 'INTEGER' },
  { name: 'recovered', type: 'BOOLEAN' },
  { name: 'wall_ms', type: 'DOUBLE' },
] as const;

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
  judge: Judge | { calls: number },
  trace?: SweepTrace,
): Promise<SweepSummary> {
  const { out, runs } = sweep;
  const records = readRunRecords(out);
  const complete = runs.filter((r) => existsSync(shardPath(out, r.runId)));
  const failed = runs.filter((r) => !existsSync(shardPath(out, r.runId)) && records.get(r.runId)?.status === 'failed').map((r) => r.runId);
  const allDone = complete.length === runs.length;
  const measure = allDone && !sweep.shard;
  const shards = complete.map((r) => shardPath(out, r.runId));
  const totals = new Map<string, { events: number; extra: number; prompt_tokens: number; completion_tokens: number }>();
  const tags: Record<string, number> = {};
  if (shards.length > 0) {
    for (const row of await queryRows(
      `SELECT run_id, count(*) FILTER (WHERE role = 'agent') AS events, count(*) FILTER (WHERE role <> 'agent') AS extra, sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens FROM ${readParquetSql(shards)} GROUP BY run_id`,
    )) {
      totals.set(String(row.run_id), { events: Number(row.events), extra: Number(row.extra), prompt_tokens: Number(row.prompt_tokens), completion_tokens: Number(row.completion_tokens) });
    }
    for (const row of await queryRows(`SELECT tag, count(*) AS n FROM ${readParquetSql(shards)} WHERE role = 'agent' GROUP BY tag ORDER BY tag`)) tags[String(row.tag)] = Number(row.n);
  }
  const measured = measure
    ? await measureSweep(out, runs.map((r) => ({ runId: r.runId, configId: r.configId, n: r.n, promptId: r.prompt.id })), encoders, sweep.spec.whitening, true, trace)
    : null;
  const orderParams = measured?.orderParams ?? [];
  const first = encoders[0]!.name;
  const price = sweep.spec.backend.kind === 'surrogate' ? undefined : sweep.spec.backend.price;
  const cost = (prompt: number | null, completion: number | null) =>
    price && prompt !== null && completion !== null ? (prompt * price.prompt_per_mtok + completion * price.completion_per_mtok) / 1e6 : null;
  // Drift reads accuracy (not_known and judge failures count as wrong), which the tags give on every snapshot.
  const accuracySeries = new Map<string, (number | null)[]>();
  for (const p of orderParams) {
    if (p.encoder !== first) continue;
    const series = accuracySeries.get(p.run_id);
    if (series) series.push(snapshotAccuracy(p));
    else accuracySeries.set(p.run_id, [snapshotAccuracy(p)]);
  }
  const toleranceSetting = sweep.spec.drift?.tolerance ?? 'auto';
  const runRows = runs.map((r) => {
    const t = totals.get(r.runId);
    const rec = records.get(r.runId);
    const accuracy = accuracySeries.get(r.runId);
    const tolerance = driftTolerance(toleranceSetting, r.n);
    const drift = accuracy ? driftStats(accuracy, tolerance) : { focus_total: null, drift_onset: null, recovered: null };
    return {
      run_id: r.runId,
      config_id: r.configId,
      trial: r.trial,
      prompt_id: r.prompt.id,
      geometry: r.geometryLabel,
      n: r.n,
      k: r.k,
      temperature: r.temperature,
      protocol: r.protocol,
      dynamics: r.dynamics,
      seed: r.seed,
      status: t ? 'complete' : failed.includes(r.runId) ? 'failed' : 'pending',
      events: t?.events ?? 0,
      calls: rec?.calls ?? null,
      retries: rec?.retries ?? null,
      prompt_tokens: t?.prompt_tokens ?? null,
      completion_tokens: t?.completion_tokens ?? null,
      cost: cost(t?.prompt_tokens ?? null, t?.completion_tokens ?? null),
      extra_calls: t?.extra ?? null,
      // A run that stopped early has a whole number of sweeps; the agent calls it did not make are saved.
      stopped_early: t ? t.events < runEvents(r) : null,
      sweeps_run: t ? t.events / r.n - 1 : null,
      calls_saved: t ? runEvents(r) - t.events : null,
      focus: accuracy ? focusSeries(accuracy) : null,
      ...drift,
      drift_tolerance: accuracy ? tolerance : null,
      wall_ms: rec?.wall_ms ?? null,
    };
  });
  await writeParquetTable(join(out, 'runs.parquet'), [...RUN_COLUMNS], runRows);
  if (measure) await writeParquetTable(join(out, 'order_params.parquet'), [...ORDER_PARAM_COLUMNS], orderParams as unknown as Record<string, unknown>[]);
  const files: Manifest['files'] = {};
  const listed = [...shards, join(out, 'runs.parquet')];
  if (measure) {
    listed.push(join(out, 'order_params.parquet'));
    for (const p of new Set(runs.map((r) => r.prompt.id))) for (const e of encoders) listed.push(join(out, 'whitening', `${p}__${e.name}.parquet`));
  }
  for (const f of listed) files[relative(out, f)] = { bytes: statSync(f).size, sha256: await sha256File(f) };
  const eventsWritten = [...totals.values()].reduce((s, t) => s + t.events, 0);
  const status: Manifest['status'] = allDone ? 'complete' : failed.length > 0 ? 'failed' : 'running';
  writeManifest(out, {
    ...manifest,
    code: { ...manifest.code, panta: codeVersion() },
    status,
    runs: { planned: runs.length, complete: complete.length, failed },
    events: { planned: manifest.events.planned, written: eventsWritten },
    tags,
    usage: {
      calls: runRows.reduce((s, r) => s + (r.calls ?? 0), 0),
      retries: runRows.reduce((s, r) => s + (r.retries ?? 0), 0),
      prompt_tokens: runRows.reduce((s, r) => s + (r.prompt_tokens ?? 0), 0),
      completion_tokens: runRows.reduce((s, r) => s + (r.completion_tokens ?? 0), 0),
      cost: price ? runRows.reduce((s, r) => s + (r.cost ?? 0), 0) : null,
      judge_calls: judge instanceof LlmJudge ? judge.stats.calls : 'calls' in judge ? judge.calls : 0,
    },
    files,
    updated_at: new Date().toISOString(),
  });
  return { out, status, runsComplete: complete.length, runsPlanned: runs.length, failed, eventsWritten, final: summarise(runs, orderParams, first) };
}

function summarise(runs: readonly RunPlan[], rows: readonly OrderParamRow[], encoder: string): SummaryRow[] {
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
