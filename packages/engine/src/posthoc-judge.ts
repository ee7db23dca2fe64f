import { EVENT_ROWS_SQL, InputError, isEventRole, judgeInFlight, type JudgeSpec, type Tag } from '@panta/core';
import {
  judgeOrderParamsPath,
  judgeRunsTablePath,
  manifestPath,
  orderParamsPath,
  posthocJournalPath,
  posthocJudgeCachePath,
  readEvents,
  readOrderParams,
  readPosthocJournal,
  removePosthocJournal,
  shardPath,
  startPosthocJournal,
  tagColumn,
  tagColumnName,
  writeManifest,
  writeShardColumn,
  type Manifest,
} from '@panta/corpus';
import { LlmJudge, createJudge, type Judge } from '@panta/judge';
import { sweepLogger } from './log.js';
import { openPosthocCorpus, pool, refreshChecksums, rewriteShards, type PosthocCorpus, type PosthocProgress } from './posthoc-corpus.js';
import type { PosthocSummary } from './posthoc-embed.js';
import { rejudgeTables } from './posthoc-judge-tables.js';

export interface JudgeCorpusOptions {
  /** The judge's name: its `tag_<name>` column and judges/<name>/ folder (default: from its model). */
  name?: string;
  /** Re-tag with a judge a previous `panta judge` added under this name. */
  replace?: boolean;
  /** Verdicts asked at once (the judge's backend caps its own requests with max_in_flight). Default 64. */
  concurrency?: number;
  /** The file the judge block came from, for errors naming it. */
  source?: string;
  onProgress?(progress: PosthocProgress): void;
  /** Level of the lines added to <out>/log.jsonl (default info; 'silent' for none). */
  logLevel?: string;
  /** Aborting stops after the shard being re-tagged; a rerun resumes at the next. */
  signal?: AbortSignal;
}

interface JudgeHeader {
  judge: JudgeSpec;
  replace: boolean;
}

const NAME = /^[a-z][a-z0-9_]*$/;

/** A judge's default name: `reference`, or its model's name in lower case with _ for anything else. */
export function defaultJudgeName(spec: JudgeSpec): string {
  if (spec.kind === 'reference') return 'reference';
  const base = spec.backend.model
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z]/.test(base) ? base : `judge_${base}`;
}

/**
 * `panta judge`: re-tags every answer of a finished corpus with another judge, no agent call made again.
 * Its verdicts go to a `tag_<name>` column of every shard (rewritten beside itself and renamed into place,
 * journaled shard by shard: a rerun after a crash resumes at the first shard not done, and its verdict cache
 * spares every answer judged before). The sweep's own `tag` stays: the dynamics saw it (early stopping, the
 * drift policy). Then the judge's order parameters (counts, rho, delta rho) and runs.parquet (FOCUS, drift)
 * go to judges/<name>/, and the manifest lists the judge.
 */
export async function judgeCorpus(dir: string, spec: JudgeSpec, options: JudgeCorpusOptions = {}): Promise<PosthocSummary> {
  const name = options.name ?? defaultJudgeName(spec);
  if (!NAME.test(name))
    throw new InputError(
      '--name',
      '',
      `${JSON.stringify(name)} cannot name a column`,
      'use lower-case letters, digits and _, starting with a letter',
    );
  const corpus = await openPosthocCorpus(dir);
  try {
    return await judgeLocked(corpus, spec, name, options);
  } finally {
    corpus.lock.release();
  }
}

async function judgeLocked(corpus: PosthocCorpus, spec: JudgeSpec, name: string, options: JudgeCorpusOptions): Promise<PosthocSummary> {
  const { out, manifest, runs } = corpus;
  const journalFile = posthocJournalPath(out, 'judge', name);
  const journal = readPosthocJournal<JudgeHeader>(journalFile);
  const replace = options.replace ?? false;
  checkJudgeAllowed(corpus, spec, name, replace, journal?.header);
  const concurrency = options.concurrency ?? 64;
  const judge = passJudge(spec, concurrency, corpus, name, options.source);
  const header: JudgeHeader = { judge: spec, replace: replace || (journal?.header.replace ?? false) };
  if (!journal) await startPosthocJournal(journalFile, header);
  const done = journal?.done ?? new Set<string>();
  const log = sweepLogger(out, options.logLevel ?? 'info');
  log.info(
    { pass: 'judge', name: name, shards: runs.length, done: done.size, replace: header.replace },
    done.size > 0 ? 'post-hoc pass resumed' : 'post-hoc pass started',
  );
  const column = tagColumnName(name);
  const progress: PosthocProgress = {
    eventsExecuted: 0,
    eventsWritten: 0,
    eventsTotal: runs.reduce((s, r) => s + r.events, 0),
    eventsOnDisk: 0,
    inflight: 0,
    calls: 0,
    runsFinished: 0,
    runsTotal: runs.length,
  };
  const calls = () => (judge instanceof LlmJudge ? judge.stats.calls : 0);
  const pass = {
    column,
    replace: header.replace,
    done,
    journalFile,
    progress,
    log,
    signal: options.signal,
    onProgress: options.onProgress,
    calls,
  };
  let result: Awaited<ReturnType<typeof rewriteShards>>;
  try {
    result = await rewriteShards(out, runs, pass, async (run, file) => {
      const tags = await judgeShard(file, run.runId, judge, corpus, concurrency, progress, () => {
        progress.calls = calls();
        options.onProgress?.({ ...progress });
      });
      await writeShardColumn(file, tagColumn(name), tags);
      progress.calls = calls();
    });
  } finally {
    await judge.close();
  }
  const { rewritten, stopped } = result;
  const summary = { out, name, shardsRewritten: rewritten, shardsTotal: runs.length, answers: progress.eventsTotal, calls: calls() };
  if (stopped) {
    log.info({ rewritten }, 'post-hoc pass stopped');
    return { ...summary, status: 'stopped' };
  }
  const params = await readOrderParams(orderParamsPath(out));
  await rejudgeTables(out, runs, name, params, manifest.encoders[0].name, manifest);
  // A resumed pass counts the calls of the shards its earlier sessions did (journaled with them), as one pass would.
  await recordJudgePass(corpus, spec, name, judge.model, {
    calls: calls(),
    journaled: journal ? { calls: journal.calls ?? 0 } : undefined,
    replaced: header.replace,
  });
  await removePosthocJournal(journalFile);
  log.info({ rewritten, calls: summary.calls }, 'post-hoc pass finished');
  return { ...summary, status: 'complete' };
}

/** The pass's judge: an unset max_in_flight follows this pass's concurrency, as a sweep's judge follows the sweep's. */
function passJudge(spec: JudgeSpec, concurrency: number, corpus: PosthocCorpus, name: string, source: string | undefined): Judge {
  const resolved: JudgeSpec =
    spec.kind === 'llm' && spec.backend.kind !== 'surrogate' && !spec.backend.max_in_flight
      ? { ...spec, backend: { ...spec.backend, max_in_flight: judgeInFlight(concurrency) } }
      : spec;
  return createJudge(resolved, source ?? '--judge', [...corpus.prompts.values()], undefined, {
    cacheFile: posthocJudgeCachePath(corpus.out, name),
  });
}

/** As the manifest's `tags` counts the sweep's: the tags that occur in the judge's column. */
async function countTags(corpus: PosthocCorpus, column: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const run of corpus.runs) {
    for await (const b of readEvents([shardPath(corpus.out, run.runId)], { columns: [column], where: EVENT_ROWS_SQL }))
      for (const t of b.columns[column] as Tag[]) counts[t] = (counts[t] ?? 0) + 1;
  }
  return counts;
}

/**
 * The judge's entry in the manifest (its calls, with those of earlier sessions of a resumed pass, and its
 * tags), the pass in `posthoc`, and the checksums of the judge's tables.
 */
async function recordJudgePass(
  corpus: PosthocCorpus,
  spec: JudgeSpec,
  name: string,
  model: string,
  pass: { calls: number; journaled: { calls: number } | undefined; replaced: boolean },
): Promise<void> {
  const { out, manifest } = corpus;
  const counts = await countTags(corpus, tagColumnName(name));
  const previous = (manifest.judges ?? []).find((j) => j.name === name);
  const entry = {
    name,
    kind: spec.kind,
    model,
    calls: (previous && pass.journaled ? previous.calls : 0) + (pass.journaled?.calls ?? 0) + pass.calls,
    tags: counts,
  };
  const judges = previous ? (manifest.judges ?? []).map((j) => (j.name === name ? entry : j)) : [...(manifest.judges ?? []), entry];
  const next: Manifest = {
    ...manifest,
    judges,
    posthoc: [...(manifest.posthoc ?? []), { pass: 'judge', name, replaced: pass.replaced, finished_at: new Date().toISOString() }],
    updated_at: new Date().toISOString(),
  };
  next.files = await refreshChecksums(out, manifest, [judgeOrderParamsPath(out, name), judgeRunsTablePath(out, name)]);
  writeManifest(out, next);
}

/** A judge name the corpus has is refused unless replaced (exit 2); a journal resumes only the same pass. */
function checkJudgeAllowed(corpus: PosthocCorpus, spec: JudgeSpec, name: string, replace: boolean, pending: JudgeHeader | undefined): void {
  if (pending) {
    if (JSON.stringify(pending.judge) !== JSON.stringify(spec))
      throw new InputError(
        posthocJournalPath(corpus.out, 'judge', name),
        'judge',
        `an unfinished panta judge named ${name} used another judge (${JSON.stringify(pending.judge)})`,
        'finish it with the same --judge, or delete the journal to start over',
      );
    return;
  }
  if ((corpus.manifest.judges ?? []).some((j) => j.name === name) && !replace)
    throw new InputError(
      manifestPath(corpus.out),
      'judges',
      `the corpus has a judge named ${name} already`,
      'give another --name, or pass --replace to re-tag with it',
    );
}

/** The judge's tag of every agent answer of a shard (null for protocol calls), `concurrency` verdicts at once. */
async function judgeShard(
  file: string,
  runId: string,
  judge: Judge,
  corpus: PosthocCorpus,
  concurrency: number,
  progress: PosthocProgress,
  report: () => void,
): Promise<(Tag | null)[]> {
  const roles: string[] = [];
  const asks: { row: number; promptId: string; response: string }[] = [];
  for await (const batch of readEvents([file], { columns: ['role', 'prompt_id', 'response'] })) {
    const role = batch.columns.role as string[];
    const promptIds = batch.columns.prompt_id as string[];
    const response = batch.columns.response as (string | null)[];
    for (let r = 0; r < batch.rows; r++) {
      if (isEventRole(role[r])) asks.push({ row: roles.length, promptId: promptIds[r], response: response[r] ?? '' });
      roles.push(role[r]);
    }
  }
  const tags = new Array<Tag | null>(roles.length).fill(null);
  let last = 0;
  await pool(asks.length, concurrency, async (i) => {
    const a = asks[i];
    const prompt = corpus.prompts.get(a.promptId);
    if (!prompt) throw new Error(`${runId}: prompt ${a.promptId} is not in the manifest's prompts`);
    const now = judge.judgeNow?.(prompt, a.response);
    if (now !== undefined) tags[a.row] = now;
    else {
      progress.inflight++;
      try {
        tags[a.row] = await judge.judge(prompt, a.response);
      } finally {
        progress.inflight--;
      }
    }
    progress.eventsExecuted++;
    if (performance.now() - last > 200) {
      last = performance.now();
      report();
    }
  });
  return tags;
}
