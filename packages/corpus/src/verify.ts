import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import {
  EVENT_ROWS_SQL,
  InputError,
  protocolOf,
  Schedule,
  graphFor,
  nextControl,
  parseEdgeList,
  promptSchema,
  runEvents,
  shardLabel,
  shardWeigherFor,
  sweepSpecSchema,
  driftTolerance,
  snapshotAccuracy,
  type ControlState,
  type RunPlan,
  type SweepSpec,
  type Tag,
} from '@panta/core';
import { adaptiveRuns, type AdaptivePlanInput } from './adaptive-grids.js';
import { checkAdaptiveGrids } from './verify-adaptive.js';
import { CORPUS_FILES, manifestPath, orderParamsPath, runsTablePath, shardName, shardPath } from './corpus-paths.js';
import { readParquetSql } from './duckdb.js';
import { queryRows } from './parquet-table.js';
import { runDriftColumns } from './run-drift.js';
import { RUN_DRIFT_COLUMNS } from './run-table-schema.js';
import { firstDifference, omitColumns } from './table.js';
import { readEvents } from './event-reader.js';
import { CORPUS_FORMAT, type Manifest, readManifest, sha256File } from './manifest.js';
import { measureSweep, type WhiteningMode } from './measure/sweep-measure.js';
import { readWhitening } from './measure/whitening-io.js';
import { unlistedFiles } from './verify-files.js';
import { checkManifestCounts, checkManifestDigest } from './verify-manifest.js';
import { checkPosthoc } from './verify-posthoc.js';
import { checkTeamShard } from './verify-team.js';
import { checkTeamTable } from './verify-team-table.js';
import { checkAddedTables } from './verify-added-tables.js';
import { ORDER_PARAMS_TABLE, type OrderParamRow } from './measure/order-params-io.js';
import { checkPhaseTable } from './measure/phase-table.js';

export interface VerifyReport {
  ok: boolean;
  problems: string[];
  /** What could not be checked, said beside an ok (a manifest without a digest). */
  notes: string[];
  /** What was checked, for the closing line. */
  checked: string;
}

const TOLERANCE = 1e-9;

/** The measured columns of order_params.parquet: all but the snapshot's identity (run, configuration, sweep, encoder). */
const MEASURED_COLUMNS = omitColumns(ORDER_PARAMS_TABLE, ['run_id', 'config_id', 'sweep', 'encoder']).columns;

function close(a: number | null, b: number | null): boolean {
  if (a === null || b === null || Number.isNaN(a) || Number.isNaN(b))
    return (a === null || Number.isNaN(a)) === (b === null || Number.isNaN(b));
  return Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * The runs the manifest's spec plans (a part's slice; with adaptive temperatures, under the grids it records),
 * each shard checked; with adaptive temperatures, the rounds replayed from the runs must reach those grids.
 */
async function checkRuns(
  out: string,
  manifest: Manifest,
  input: Omit<AdaptivePlanInput, 'weigh'>,
  problems: string[],
): Promise<{ runs: RunPlan[]; good: RunPlan[] }> {
  const plan = { ...input, weigh: shardWeigherFor(manifest.shard?.policy ?? 'events', input.spec, input.edgeLists) };
  const runs = adaptiveRuns(plan, new Map(Object.entries(manifest.adaptive?.grids ?? {})));
  const good = await checkShards(out, runs, input.edgeLists, manifest.encoders, problems);
  if (good.length === runs.length && !Array.isArray(input.spec.temperatures))
    problems.push(...(await unreadable(out, () => checkAdaptiveGrids(out, manifest, plan))));
  return { runs, good };
}

/**
 * Checks a corpus against its own manifest: every planned run has a readable shard with events
 * 0..(sweeps+1)N-1 exactly once, in the order the schedule (recomputed from the seeds) gives; checksums
 * match; whitening and order parameters recomputed from the events match the stored ones. A part of a job
 * array (`panta run --shard`) is checked the same way over its own runs, without the measurement.
 */
export async function verifyCorpus(dir: string): Promise<VerifyReport> {
  const out = resolve(dir);
  if (!existsSync(out)) throw new InputError(dir, '', 'no such folder', 'give the folder a sweep wrote (its --out)');
  const manifest = readManifestToVerify(out, dir);
  if (!manifest)
    return {
      ok: false,
      problems: [`${manifestPath(dir)} is missing: this is not a Panta corpus, or its sweep never started`],
      notes: [],
      checked: '',
    };
  const problems: string[] = [];
  const notes: string[] = [];
  const digest = checkManifestDigest(manifest);
  problems.push(...digest.problems);
  notes.push(...digest.notes);
  if (manifest.format !== CORPUS_FORMAT) problems.push(`manifest format ${manifest.format} is not ${CORPUS_FORMAT}`);
  if (manifest.status !== 'complete')
    problems.push(`manifest status is ${manifest.status}, not complete (run the sweep again to resume it)`);
  // A manifest edited past reading (its spec or prompts no longer parse) is named in one line, with the digest's word.
  let spec: ReturnType<typeof sweepSpecSchema.parse>;
  let prompts: ReturnType<typeof promptSchema.parse>[];
  try {
    spec = sweepSpecSchema.parse(manifest.spec);
    prompts = manifest.prompts.map((p) => promptSchema.parse(p));
  } catch (e) {
    const issue = (e as { issues?: { path: (string | number)[]; message: string }[] }).issues?.[0];
    const why = issue ? `${issue.path.join('.')}: ${issue.message}` : firstLine(e);
    problems.push(`${CORPUS_FILES.manifest}: its spec or prompts cannot be read (${why}): restore it, or re-run the sweep`);
    return { ok: false, problems: withoutEchoes(problems), notes, checked: '' };
  }
  const edgeLists = readEdgeLists(spec, manifest.spec_file);
  if (typeof edgeLists === 'string') {
    problems.push(edgeLists);
    return { ok: false, problems, notes, checked: '' };
  }
  // A part of a job array holds its slice of the grid, and no measurement (panta merge makes it).
  const shard = manifest.shard;
  const { runs, good } = await checkRuns(out, manifest, { spec, prompts, specFile: manifest.spec_file, edgeLists, shard }, problems);
  const { damaged, unreadableTables } = await checkFiles(out, dir, manifest, problems);
  const checked = `${runs.length} runs, ${manifest.events?.written} events, ${Object.keys(manifest.files ?? {}).length} files`;
  const allGood = good.length === runs.length;
  // Counts are recomputed from shards that checked out and a runs.parquet that matches its checksum.
  if (allGood && unreadableTables.size === 0 && !damaged.has(CORPUS_FILES.runs))
    problems.push(...(await unreadable(out, () => checkManifestCounts(out, manifest, runs, spec.seed ?? 0))));
  if (shard)
    return {
      ok: problems.length === 0,
      problems: withoutEchoes(problems),
      notes,
      checked: `${shardLabel(shard)}: ${checked}; no order parameters until panta merge`,
    };
  // The tables are measured only when each of them reads (each one that does not is named above).
  const tablesIntact = unreadableTables.size === 0 && [...damaged].every((f) => existsSync(join(out, f)));
  if (allGood && tablesIntact)
    // A whitening taken from another corpus is checked as this corpus holds it (a copy, checksummed above).
    problems.push(
      ...(await unreadable(out, () =>
        checkMeasurement(
          out,
          runs,
          manifest.encoders,
          typeof spec.whitening === 'object' ? { from: out } : spec.whitening,
          spec.drift?.tolerance ?? 'auto',
        ),
      )),
    );
  if (allGood && tablesIntact) problems.push(...(await unreadable(out, () => checkTeamTable(out, runs))));
  if (allGood && tablesIntact) problems.push(...(await unreadable(out, () => checkAddedTables(out, runs))));
  if (tablesIntact)
    problems.push(...(await unreadable(out, () => checkPosthoc(out, manifest, allGood ? runs : null, spec.drift?.tolerance ?? 'auto'))));
  return { ok: problems.length === 0, problems: withoutEchoes(problems), notes, checked };
}

/** The corpus's manifest, or null when it has none; one that does not read is one line (exit 2). */
function readManifestToVerify(out: string, dir: string): Manifest | null {
  try {
    return readManifest(out);
  } catch (e) {
    throw new InputError(manifestPath(dir), '', `unreadable manifest (${(e as Error).message})`, 'restore it, or re-run the sweep');
  }
}

/** The spec's edge lists, read beside its spec file; a missing one is the problem that stops the check. */
function readEdgeLists(spec: SweepSpec, specFile: string): Map<string, [number, number][]> | string {
  const edgeLists = new Map<string, [number, number][]>();
  for (const g of spec.geometries) {
    if (g.kind !== 'edges') continue;
    const file = resolve(dirname(specFile), g.path);
    if (!existsSync(file)) return `edge list ${file} of geometry ${g.path} is missing; the schedule cannot be checked`;
    edgeLists.set(g.path, parseEdgeList(readFileSync(file, 'utf8'), file));
  }
  return edgeLists;
}

/** Each run's shard, its calls and its stop checked; the runs that checked out. */
async function checkShards(
  out: string,
  runs: readonly RunPlan[],
  edgeLists: Map<string, [number, number][]>,
  encoders: Manifest['encoders'],
  problems: string[],
): Promise<RunPlan[]> {
  const good: RunPlan[] = [];
  for (const run of runs) {
    let problem: string | null;
    try {
      problem =
        (await checkShard(out, run, edgeLists)) ??
        (await checkCalls(out, run)) ??
        (await checkStop(out, run, run.controls.encoder ?? encoders[0].name));
    } catch (e) {
      problem = `truncated or corrupt shard ${run.runId}: ${firstLine(e)}`;
    }
    if (problem) problems.push(problem);
    else good.push(run);
  }
  return good;
}

/**
 * Checksums first: a changed table that no longer reads as Parquet is named here, in one line, and not read
 * below (DuckDB's error spans lines and names no file); one that still reads is measured, to say what changed.
 * Files missing or changed, the ones of those that do not read, and files the manifest does not list.
 */
async function checkFiles(
  out: string,
  dir: string,
  manifest: Manifest,
  problems: string[],
): Promise<{ damaged: Set<string>; unreadableTables: Set<string> }> {
  const damaged = new Set<string>();
  const unreadableTables = new Set<string>();
  for (const [file, expected] of Object.entries(manifest.files ?? {})) {
    const path = join(out, file);
    if (!existsSync(path)) problems.push(`${file} is listed in the manifest but missing`);
    else if ((await sha256File(path)) !== expected.sha256) {
      const broken = file.endsWith('.parquet') ? await parquetDamage(path) : null;
      problems.push(
        broken
          ? `${file} does not match its checksum in the manifest and cannot be read as Parquet (${broken}): damaged; restore it, or re-run the sweep`
          : `${file} does not match its checksum in the manifest`,
      );
      if (broken) unreadableTables.add(file);
    } else continue;
    damaged.add(file);
  }
  for (const stray of unlistedFiles(out, Object.keys(manifest.files ?? {})))
    problems.push(
      `${stray} is not listed in the manifest: it is not part of this corpus (queries of the folder would read it); move it out of ${dir}`,
    );
  return { damaged, unreadableTables };
}

/** A field a recomputed count names ("manifest.json: events.written says ..."), or one of its sub-fields, needs no digest line besides. */
function withoutEchoes(problems: string[]): string[] {
  const said = new Set(problems.map((p) => /^manifest\.json: (\S+) says /.exec(p)?.[1]).filter(Boolean));
  return problems.filter((p) => {
    const field = /^manifest\.json: (\S+) (?:does not match|was added|was removed)/.exec(p)?.[1];
    return !field || ![...said].some((f) => f === field || f!.startsWith(`${field}.`));
  });
}

/** Why a Parquet file cannot be read whole (DuckDB's first line), or null when every row of it reads. */
async function parquetDamage(path: string): Promise<string | null> {
  try {
    await queryRows(`SELECT * FROM ${readParquetSql([path])}`);
    return null;
  } catch (e) {
    return firstLine(e);
  }
}

function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0];
}

/**
 * A check's problems, or one line for a table it could not read: DuckDB's error spans lines and names no
 * file, so the file is taken from it when it quotes one, else said to be one of the corpus's tables.
 */
async function unreadable(out: string, check: () => Promise<string[]>): Promise<string[]> {
  try {
    return await check();
  } catch (e) {
    const message = String((e as Error)?.message ?? e);
    const quoted = /["'](\/[^"']+\.parquet)["']/.exec(message)?.[1];
    const where = quoted ? relative(out, quoted) : `one of the tables in ${out}`;
    return [`${where} cannot be read as Parquet (${firstLine(e)}): restore it, or re-run the sweep`];
  }
}

async function checkShard(out: string, run: RunPlan, edgeLists: Map<string, [number, number][]>): Promise<string | null> {
  const file = shardPath(out, run.runId);
  if (!existsSync(file)) return `missing run ${run.runId} (no ${shardName(run.runId)})`;
  let stats: Record<string, unknown>;
  try {
    [stats] = (await queryRows(
      `SELECT count(*) AS rows, count(DISTINCT event) AS distinct_events, min(event) AS lo, max(event) AS hi FROM ${readParquetSql([file])} WHERE ${run.controls.team ? EVENT_ROWS_SQL : "role = 'agent'"}`,
    )) as [Record<string, unknown>];
  } catch (e) {
    return `truncated or corrupt shard ${run.runId}: ${(e as Error).message.split('\n')[0]}`;
  }
  const rows = Number(stats.rows);
  if (run.controls.team) {
    const total = runEvents(run);
    if (rows !== total) return `event gaps in ${run.runId}: expected events 0..${total - 1} once each, found ${rows} rows`;
    return checkTeamShard(file, run);
  }
  // A run that stopped early (early stopping) holds whole sweeps, at least as many as the rule needs.
  const rule = run.controls.earlyStopping;
  const stoppedEarly =
    rule !== undefined && rows % run.n === 0 && rows / run.n - 1 >= Math.max(rule.min_sweeps, rule.window) && rows < runEvents(run);
  const total = stoppedEarly ? rows : runEvents(run);
  if (rows !== total || Number(stats.distinct_events) !== total || Number(stats.lo) !== 0 || Number(stats.hi) !== total - 1) {
    return `event gaps in ${run.runId}: expected events 0..${total - 1} once each, found ${rows} rows, ${Number(stats.distinct_events)} distinct, range ${String(stats.lo)}..${String(stats.hi)}`;
  }
  const schedule = new Schedule(run, graphFor(run.geometry, run.n, run.seed, edgeLists));
  for await (const batch of readEvents([file], { columns: ['event', 'agent', 'seed', 'run_id'], where: "role = 'agent'" })) {
    const events = batch.columns.event as number[];
    const agents = batch.columns.agent as number[];
    const seeds = batch.columns.seed as number[];
    const ids = batch.columns.run_id as string[];
    for (let r = 0; r < batch.rows; r++) {
      const plan = schedule.next()!;
      if (events[r] !== plan.event || agents[r] !== plan.agent || seeds[r] !== plan.seed || ids[r] !== run.runId) {
        return `${run.runId}: row ${plan.event} is not the schedule's event (event ${events[r]}, agent ${agents[r]} vs ${plan.agent}, seed ${seeds[r]} vs ${plan.seed})`;
      }
    }
  }
  return null;
}

/**
 * SSVP as published (no-sync, ssvp, full-broadcast): one summary per event; merges only in ssvp, each for a
 * pair above tau (its row's divergence) before an answer whose largest pair CDS is above tau, at most one per
 * neighbour; an answer above tau with no merge is a merge missing.
 */
async function checkSummaryCalls(
  file: string,
  run: RunPlan,
  c: { summaries: number; agents: number; merges: number },
): Promise<string | null> {
  if (c.summaries !== c.agents) return `${run.runId}: ${c.summaries} summary calls for ${c.agents} answers (one per event)`;
  if (!protocolOf(run.protocol).calls.includes('merge'))
    return c.merges > 0 ? `${run.runId}: ${c.merges} merge calls in a ${run.protocol} run` : null;
  const tau = run.controls.tau;
  const [bad] =
    (await queryRows(`WITH m AS (SELECT event, count(*) AS merges, min(divergence) AS low FROM ${file} WHERE role = 'merge' GROUP BY event)
    SELECT
      count(*) FILTER (WHERE m.low IS NULL OR NOT (m.low > ${tau}))::INTEGER AS below,
      count(*) FILTER (WHERE m.merges > len(a.neighbours))::INTEGER AS excess,
      count(*) FILTER (WHERE NOT (a.divergence > ${tau}))::INTEGER AS ungated
    FROM m JOIN ${file} a ON a.role = 'agent' AND a.event = m.event`)) as Record<string, number>[];
  const [missing] = (await queryRows(`SELECT count(*)::INTEGER AS n FROM ${file} a
    WHERE a.role = 'agent' AND a.divergence > ${tau} AND NOT EXISTS (SELECT 1 FROM ${file} m WHERE m.role = 'merge' AND m.event = a.event)`)) as Record<
    string,
    number
  >[];
  if (bad!.below > 0 || bad!.ungated > 0)
    return `${run.runId}: ssvp merges at ${bad!.below + bad!.ungated} events for pairs whose CDS does not exceed tau ${tau}`;
  if (bad!.excess > 0) return `${run.runId}: ${bad!.excess} events merge more often than they have neighbours`;
  if (missing!.n > 0) return `${run.runId}: ${missing!.n} answers have a pair above tau ${tau} but no merge`;
  return null;
}

/**
 * Protocol calls are where their protocol puts them: a merge before exactly the ssvp answers whose divergence
 * exceeds tau, judge and moderator calls only in drift-policy runs, a moderator only after a judge.
 */
async function checkCalls(out: string, run: RunPlan): Promise<string | null> {
  // A team run's calls are its events, checked against its schedule (checkTeamShard).
  if (run.controls.team) return null;
  const file = readParquetSql([shardPath(out, run.runId)]);
  const [c] = (await queryRows(`SELECT
      count(*) FILTER (WHERE role = 'merge')::INTEGER AS merges,
      count(*) FILTER (WHERE role IN ('judge', 'moderator'))::INTEGER AS boundary,
      count(*) FILTER (WHERE role = 'moderator')::INTEGER AS moderators,
      count(*) FILTER (WHERE role NOT IN ('agent', 'summary', 'merge', 'judge', 'moderator'))::INTEGER AS unknown,
      count(*) FILTER (WHERE role = 'summary')::INTEGER AS summaries,
      count(*) FILTER (WHERE role = 'agent')::INTEGER AS agents,
      count(*) FILTER (WHERE role = 'agent' AND divergence > ${run.controls.tau})::INTEGER AS divergent,
      (SELECT count(*) FROM ${file} m WHERE m.role = 'merge' AND NOT EXISTS (SELECT 1 FROM ${file} a WHERE a.role = 'agent' AND a.event = m.event AND a.divergence > ${run.controls.tau}))::INTEGER AS misplaced,
      (SELECT count(*) FROM ${file} m WHERE m.role = 'moderator' AND NOT EXISTS (SELECT 1 FROM ${file} j WHERE j.role = 'judge' AND j.event = m.event))::INTEGER AS unjudged
    FROM ${file}`)) as Record<string, number>[];
  const { merges, boundary, moderators, unknown, divergent, misplaced, unjudged, summaries, agents } = c!;
  if (unknown > 0) return `${run.runId}: ${unknown} rows have a role that is not agent, summary, merge, judge or moderator`;
  // An ssvp run without summary rows is the answer-gated ssvp of corpora written before SSVP as published.
  // The roles the run's protocol may write, from its registry entry.
  const { version, calls } = protocolOf(run.protocol);
  const merging = calls.includes('merge');
  if (version === 'summary' && (!merging || summaries > 0)) return checkSummaryCalls(file, run, { summaries, agents, merges });
  if (summaries > 0) return `${run.runId}: ${summaries} summary calls in a ${run.protocol} run`;
  if (merging && (merges !== divergent || misplaced > 0)) {
    return `${run.runId}: ${run.protocol} merges ${merges} times, but ${divergent} answers diverge beyond tau ${run.controls.tau} (${misplaced} merges elsewhere)`;
  }
  if (!merging && merges > 0) return `${run.runId}: ${merges} merge calls in a ${run.protocol} run`;
  if (!calls.includes('judge') && boundary > 0) return `${run.runId}: ${boundary} judge or moderator calls in a ${run.protocol} run`;
  if (unjudged > 0 || moderators > boundary - moderators)
    return `${run.runId}: ${unjudged} moderator calls without a judge call before them`;
  return null;
}

/**
 * Early stopping: the run ends after the first sweep where the stop rule holds on its own snapshots (control
 * magnetisation on the encoder's raw embeddings, rho from the tags), and runs every sweep when it never holds.
 */
async function checkStop(out: string, run: RunPlan, encoder: string): Promise<string | null> {
  const rule = run.controls.earlyStopping;
  if (!rule) return null;
  const column = `emb_${encoder}`;
  const n = run.n;
  const emb = new Array<Float32Array>(n);
  const tags = new Array<Tag>(n);
  let state: ControlState | undefined;
  let last = -1;
  let stop: number | undefined;
  for await (const b of readEvents([shardPath(out, run.runId)], { columns: ['event', 'agent', 'tag', column], where: "role = 'agent'" })) {
    const vectors = b.columns[column] as Float32Array;
    const d = b.dims[column];
    for (let r = 0; r < b.rows; r++) {
      const agent = (b.columns.agent as number[])[r];
      emb[agent] = vectors.subarray(r * d, (r + 1) * d);
      tags[agent] = (b.columns.tag as Tag[])[r];
      if ((b.columns.event as number[])[r] % n !== n - 1) continue;
      state = nextControl(state, ++last, emb, tags, rule, run.sweeps);
      if (stop === undefined && state.stop) stop = last;
    }
  }
  if (stop !== undefined && stop !== last)
    return `${run.runId}: early stopping should have stopped it after sweep ${stop}, its events go on to sweep ${last}`;
  if (stop === undefined && last !== run.sweeps)
    return `${run.runId}: it stopped after sweep ${last}, where the early-stopping rule does not hold`;
  return null;
}

async function checkMeasurement(
  out: string,
  runs: RunPlan[],
  encoders: { name: string; dim: number }[],
  mode: WhiteningMode,
  tolerance: number | 'auto',
): Promise<string[]> {
  const problems: string[] = [];
  const file = orderParamsPath(out);
  if (!existsSync(file)) return [`${CORPUS_FILES.orderParams} is missing`];
  const recomputed = await measureSweep(
    out,
    runs.map((r) => ({ runId: r.runId, configId: r.configId, n: r.n, promptId: r.prompt.id })),
    encoders,
    mode,
    false,
  );
  for (const [promptId, perEncoder] of recomputed.whitenings) {
    for (const [encoder, w] of perEncoder) {
      let stored: Awaited<ReturnType<typeof readWhitening>>;
      try {
        stored = await readWhitening(out, promptId, encoder);
      } catch (e) {
        problems.push(`whitening of ${promptId}/${encoder} is missing or unreadable: ${(e as Error).message.split('\n')[0]}`);
        continue;
      }
      if (stored.mode !== w.mode || stored.fallback !== w.fallback) {
        problems.push(
          `whitening of ${promptId}/${encoder} is stored as ${stored.mode} (fallback ${stored.fallback ?? 'none'}), the t = 0 answers give ${w.mode} (fallback ${w.fallback ?? 'none'})`,
        );
        continue;
      }
      const bad =
        stored.dim !== w.dim || w.mean.some((m, i) => !close(m, stored.mean[i])) || w.matrix.some((m, i) => !close(m, stored.matrix[i]));
      if (bad) problems.push(`whitening of ${promptId}/${encoder} does not match the t = 0 answers`);
    }
  }
  const stored = await queryRows(`SELECT * FROM ${readParquetSql([file])}`);
  const key = (r: { run_id?: unknown; sweep?: unknown; encoder?: unknown }) => `${r.run_id}|${Number(r.sweep)}|${r.encoder}`;
  const byKey = new Map(stored.map((r) => [key(r), r]));
  if (stored.length !== recomputed.orderParams.length)
    problems.push(`${CORPUS_FILES.orderParams} has ${stored.length} rows, the events give ${recomputed.orderParams.length}`);
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  let mismatches = 0;
  for (const r of recomputed.orderParams) {
    const s = byKey.get(key(r));
    const field = s ? firstDifference(MEASURED_COLUMNS, r, s, (a, b) => close(num(a), num(b))) : 'row';
    if (field && mismatches++ < 5)
      problems.push(
        `order parameters of ${r.run_id} sweep ${r.sweep} (${r.encoder}) do not match the events: ${field} ${s ? `${String(s[field])} stored, ${String(r[field as keyof OrderParamRow])} recomputed` : 'missing'}`,
      );
  }
  if (mismatches > 5) problems.push(`... and ${mismatches - 5} more order-parameter mismatches`);
  problems.push(...(await checkDrift(out, runs, recomputed.orderParams, encoders[0].name, tolerance)));
  problems.push(...(await checkPhaseTable(out, runs, recomputed.orderParams, encoders)));
  return problems;
}

/**
 * runs.parquet's FOCUS and drift statistics against those of the recomputed order parameters (accuracy of
 * the first encoder's rows, the spec's tolerance). A corpus written before runs.parquet recorded
 * drift_tolerance measured drift another way and is not checked.
 */
async function checkDrift(
  out: string,
  runs: RunPlan[],
  params: readonly OrderParamRow[],
  encoder: string,
  setting: number | 'auto',
): Promise<string[]> {
  const file = runsTablePath(out);
  if (!existsSync(file)) return [`${CORPUS_FILES.runs} is missing`];
  const stored = await queryRows(`SELECT * FROM ${readParquetSql([file])}`);
  if (stored.length > 0 && !('drift_tolerance' in stored[0])) return [];
  const byRun = new Map(stored.map((r) => [String(r.run_id), r]));
  const accuracy = new Map<string, (number | null)[]>();
  for (const p of [...params].filter((p) => p.encoder === encoder).sort((a, b) => a.sweep - b.sweep)) {
    accuracy.set(p.run_id, [...(accuracy.get(p.run_id) ?? []), snapshotAccuracy(p)]);
  }
  const problems: string[] = [];
  for (const run of runs) {
    const s = byRun.get(run.runId);
    const series = accuracy.get(run.runId);
    if (!s || !series) continue;
    const expected = runDriftColumns(series, driftTolerance(setting, run.n));
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    const same = (a: unknown, b: unknown) =>
      typeof a === 'boolean' || typeof b === 'boolean' ? (a ?? null) === (b ?? null) : close(num(a), num(b));
    const bad = firstDifference(RUN_DRIFT_COLUMNS, expected, s, same);
    if (bad && problems.length < 5)
      problems.push(
        `${CORPUS_FILES.runs}: ${run.runId}: ${bad} does not match the order parameters (${String(s[bad] ?? null)} stored, ${String(expected[bad])} recomputed)`,
      );
  }
  return problems;
}
