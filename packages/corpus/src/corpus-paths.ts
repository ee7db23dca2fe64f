import { join } from 'node:path';

/**
 * The corpus layout (docs/DESIGN.md#layout): every file and folder name of an out folder, in one place. No other
 * source file spells these names (test/layout-names.test.ts greps for them), so a rename happens here.
 *
 *   <out>/manifest.json                                     what the corpus is, counts, checksums
 *   <out>/runs.parquet                                      one row per planned run (RUNS_TABLE)
 *   <out>/order_params.parquet                              order parameters per snapshot, once complete
 *   <out>/stats.parquet                                     arm statistics (mean, 95% CI, Welch t, Cohen's d), once complete
 *   <out>/phase.parquet                                     fluctuation measures per configuration (PHASE_TABLE), once complete
 *   <out>/teams.parquet                                     team metrics per (team run, turn) (TEAMS_TABLE), when the sweep has team runs
 *   <out>/whitening/<prompt>__<encoder>.parquet             each (prompt, encoder)'s whitening, once complete
 *   <out>/events/<run_id>.parquet                           finalized shard
 *   <out>/events/.parts/<run_id>/part-<first event>.parquet durable parts of an unfinished run
 *   <out>/log.jsonl                                         the sweep's JSON log
 *   <out>/.state/lock                                       the process writing the folder
 *   <out>/.state/status.json                                live status of an embedded sweep
 *   <out>/.state/runs.jsonl                                 run journal (time and calls per session)
 *   <out>/.state/control/<run_id>.jsonl                     sweep-boundary journal of a run
 *   <out>/.state/judge-cache.jsonl                          the LLM judge's verdicts
 *   <out>/judges/<judge>/order_params.parquet               a post-hoc judge's order parameters (panta judge)
 *   <out>/judges/<judge>/runs.parquet                       runs.parquet with that judge's drift numbers
 *   <out>/.state/posthoc/<pass>-<name>.jsonl                journal of an unfinished panta embed / judge
 *   <out>/.state/posthoc/judge-cache-<judge>.jsonl          a post-hoc judge's verdicts
 *   <out>/report/                                           `panta report`'s default folder
 *   <out>/annotation.json                                   `panta annotate score`'s agreement (Table 8)
 *   <out>/tau-calibration.json                              `panta calibrate-tau`'s CDS distribution of an arm
 * The parts folder starts with a dot so `events/*.parquet` globs see finalized shards only; `.state` holds
 * what a resume or a watcher reads, never data a reader of the corpus needs.
 */
export const CORPUS_FILES = {
  manifest: 'manifest.json',
  runs: 'runs.parquet',
  orderParams: 'order_params.parquet',
  stats: 'stats.parquet',
  phase: 'phase.parquet',
  teams: 'teams.parquet',
  whitening: 'whitening',
  events: 'events',
  parts: '.parts',
  log: 'log.jsonl',
  state: '.state',
  lock: 'lock',
  liveStatus: 'status.json',
  runJournal: 'runs.jsonl',
  control: 'control',
  judgeCache: 'judge-cache.jsonl',
  report: 'report',
  annotation: 'annotation.json',
  tauCalibration: 'tau-calibration.json',
  judges: 'judges',
  posthoc: 'posthoc',
} as const;

const F = CORPUS_FILES;

/** Throws unless `runId` is usable as one file name on every platform (no separators, no leading dot). */
export function validateRunId(runId: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a file name must not hold
  if (!runId || runId.startsWith('.') || /[/\\\0-\x1f:*?"<>|]/.test(runId) || runId.length > 200) {
    throw new Error(
      `run id ${JSON.stringify(runId)} cannot be a file name: no path separators, control characters, :*?"<>|, or leading dot`,
    );
  }
}

export function manifestPath(out: string): string {
  return join(out, F.manifest);
}

export function runsTablePath(out: string): string {
  return join(out, F.runs);
}

export function orderParamsPath(out: string): string {
  return join(out, F.orderParams);
}

export function statsTablePath(out: string): string {
  return join(out, F.stats);
}

export function phaseTablePath(out: string): string {
  return join(out, F.phase);
}

export function teamsTablePath(out: string): string {
  return join(out, F.teams);
}

export function whiteningDir(out: string): string {
  return join(out, F.whitening);
}

export function whiteningPath(out: string, promptId: string, encoder: string): string {
  return join(out, F.whitening, `${promptId}__${encoder}.parquet`);
}

export function eventsDir(dir: string): string {
  return join(dir, F.events);
}

/** A run's shard relative to the corpus folder, as the manifest's `files` keys and messages name it. */
export function shardName(runId: string): string {
  return join(F.events, `${runId}.parquet`);
}

export function shardPath(dir: string, runId: string): string {
  return join(dir, shardName(runId));
}

/** The folder holding every unfinished run's parts. */
export function partsRoot(dir: string): string {
  return join(dir, F.events, F.parts);
}

export function partsDir(dir: string, runId: string): string {
  return join(partsRoot(dir), runId);
}

/** Zero-padded so lexical order is event order. */
export function partFileName(firstEvent: number): string {
  return `part-${String(firstEvent).padStart(12, '0')}.parquet`;
}

export function partPath(dir: string, runId: string, firstEvent: number): string {
  return join(partsDir(dir, runId), partFileName(firstEvent));
}

/** The first event of a part file name, or undefined for any other name (tmp files included). */
export function parsePartName(name: string): number | undefined {
  const m = /^part-(\d{12,})\.parquet$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The name a file is written under before its rename into place. */
export function tmpName(path: string): string {
  return `${path}.tmp`;
}

export function logPath(out: string): string {
  return join(out, F.log);
}

export function stateDir(out: string): string {
  return join(out, F.state);
}

export function outLockPath(out: string): string {
  return join(out, F.state, F.lock);
}

export function liveStatusPath(out: string): string {
  return join(out, F.state, F.liveStatus);
}

export function runJournalPath(out: string): string {
  return join(out, F.state, F.runJournal);
}

export function controlDir(out: string): string {
  return join(out, F.state, F.control);
}

export function controlJournalPath(out: string, runId: string): string {
  validateRunId(runId);
  return join(controlDir(out), `${runId}.jsonl`);
}

export function judgeCachePath(out: string): string {
  return join(out, F.state, F.judgeCache);
}

/** Where `panta report DIR` writes unless --out says otherwise. */
export function defaultReportDir(out: string): string {
  return join(out, F.report);
}

/** Human validation's agreement and kappas, written by `panta annotate score`, read by `panta report`. */
export function tauCalibrationPath(out: string): string {
  return join(out, F.tauCalibration);
}

export function annotationPath(out: string): string {
  return join(out, F.annotation);
}

/** The folder of a post-hoc judge's tables (`panta judge --name <judge>`). */
export function judgeDir(out: string, judge: string): string {
  return join(out, F.judges, judge);
}

/** A post-hoc judge's order_params.parquet: the same columns, its tags' counts, rho and delta rho. */
export function judgeOrderParamsPath(out: string, judge: string): string {
  return join(judgeDir(out, judge), F.orderParams);
}

/** A post-hoc judge's runs.parquet: the same columns, its tags' FOCUS and drift. */
export function judgeRunsTablePath(out: string, judge: string): string {
  return join(judgeDir(out, judge), F.runs);
}

/** The journal of an unfinished post-hoc pass (`embed` or `judge`) named `name`: what a rerun resumes from. */
export function posthocJournalPath(out: string, pass: 'embed' | 'judge', name: string): string {
  return join(out, F.state, F.posthoc, `${pass}-${name}.jsonl`);
}

/** A post-hoc judge's verdict cache: its own, since the sweep's holds another judge's verdicts. */
export function posthocJudgeCachePath(out: string, judge: string): string {
  return join(out, F.state, F.posthoc, `judge-cache-${judge}.jsonl`);
}

/** The folder of post-hoc journals and verdict caches. */
export function posthocDir(out: string): string {
  return join(out, F.state, F.posthoc);
}

/** The pass and name of a post-hoc journal's file name, or undefined for any other file. */
export function parsePosthocJournalName(file: string): { pass: 'embed' | 'judge'; name: string } | undefined {
  const m = /^(embed|judge)-([a-z][a-z0-9_]*)\.jsonl$/.exec(file);
  if (!m || file.startsWith('judge-cache-')) return undefined;
  return { pass: m[1] as 'embed' | 'judge', name: m[2] };
}
