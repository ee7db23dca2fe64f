import { InputError, isEventRole, sweepSpecSchema, type EncoderColumn, type EncoderSpec } from '@panta/core';
import {
  ORDER_PARAMS_TABLE,
  embColumn,
  embColumnName,
  judgeOrderParamsPath,
  judgeRunsTablePath,
  manifestPath,
  measureSweep,
  orderParamsPath,
  posthocJournalPath,
  readEvents,
  readOrderParams,
  readPosthocJournal,
  sha256File,
  removePosthocJournal,
  startPosthocJournal,
  whiteningPath,
  writeManifest,
  writeParquetTable,
  writeShardColumn,
  type Manifest,
  type OrderParamRow,
  type WhiteningMode,
} from '@panta/corpus';
import { openEncoder, type Encoder } from '@panta/embed';
import { rejudgeTables } from './posthoc-judge-tables.js';
import { checkWhiteningSource, whiteningMode } from './whitening-source.js';
import { sweepLogger } from './log.js';
import { openPosthocCorpus, refreshChecksums, rewriteShards, type PosthocCorpus, type PosthocProgress } from './posthoc-corpus.js';

export interface EmbedCorpusOptions {
  /** Recompute the column of an encoder a previous `panta embed` added (the sweep's own are never replaced). */
  replace?: boolean;
  /** Where `encoder`'s relative paths are read from (the CLI: the working folder) and errors name. */
  source?: string;
  onProgress?(progress: PosthocProgress): void;
  /** Level of the lines added to <out>/log.jsonl (default info; 'silent' for none). */
  logLevel?: string;
  /** Aborting stops after the shard being rewritten; a rerun resumes at the next. */
  signal?: AbortSignal;
}

export interface PosthocSummary {
  out: string;
  name: string;
  /** Shards rewritten in this session, and all shards. */
  shardsRewritten: number;
  shardsTotal: number;
  answers: number;
  status: 'complete' | 'stopped';
  /** Judge calls made in this session (0 for an encoder). */
  calls: number;
}

interface EmbedHeader {
  encoder: EncoderSpec;
  replace: boolean;
}

/**
 * `panta embed`: adds (or, with `replace`, recomputes) the `emb_<name>` column of every event shard of a
 * finished corpus, no agent call made again: each shard is rewritten beside itself and renamed into place,
 * one at a time, recorded in a journal, so a rerun after a crash picks up at the first shard not done. Then
 * the encoder's whitening is fitted by the sweep's own code (measureSweep: every t = 0 answer of a prompt),
 * its order-parameter rows join order_params.parquet in the order a sweep with it from the start writes
 * them, and the manifest lists it (so verify and report see it). The result equals a sweep that had the
 * encoder from the start, in every column but timings.
 */
export async function embedCorpus(dir: string, encoder: EncoderSpec, options: EmbedCorpusOptions = {}): Promise<PosthocSummary> {
  const corpus = await openPosthocCorpus(dir);
  try {
    return await embedLocked(corpus, encoder, options);
  } finally {
    corpus.lock.release();
  }
}

async function embedLocked(corpus: PosthocCorpus, encoder: EncoderSpec, options: EmbedCorpusOptions): Promise<PosthocSummary> {
  const { out, runs } = corpus;
  const journalFile = posthocJournalPath(out, 'embed', encoder.name);
  const journal = readPosthocJournal<EmbedHeader>(journalFile);
  const replace = options.replace ?? false;
  const source = options.source ?? '--encoder';
  checkEmbedAllowed(corpus, encoder, replace, journal?.header);
  const { opened, column, mode } = await openCheckedEncoder(corpus, encoder, source);
  const header: EmbedHeader = { encoder, replace: replace || (journal?.header.replace ?? false) };
  if (!journal) await startPosthocJournal(journalFile, header);
  const done = journal?.done ?? new Set<string>();
  const log = sweepLogger(out, options.logLevel ?? 'info');
  log.info(
    { pass: 'embed', name: encoder.name, shards: runs.length, done: done.size, replace: header.replace },
    done.size > 0 ? 'post-hoc pass resumed' : 'post-hoc pass started',
  );
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
  const shardColumn = embColumnName(encoder.name);
  const pass = {
    column: shardColumn,
    replace: header.replace,
    done,
    journalFile,
    progress,
    log,
    signal: options.signal,
    onProgress: options.onProgress,
  };
  let result: Awaited<ReturnType<typeof rewriteShards>>;
  try {
    result = await rewriteShards(out, runs, pass, async (_run, file) => {
      const values = await embedShard(file, opened, progress, options);
      await writeShardColumn(file, embColumn(encoder.name), values);
    });
  } finally {
    await opened.close();
  }
  const { rewritten, stopped } = result;
  const summary = {
    out,
    name: encoder.name,
    shardsRewritten: rewritten,
    shardsTotal: runs.length,
    answers: progress.eventsTotal,
    calls: 0,
  };
  if (stopped) {
    log.info({ rewritten }, 'post-hoc pass stopped');
    return { ...summary, status: 'stopped' };
  }
  await measureEncoder(corpus, column, mode, {
    kind: encoder.kind,
    model: opened.model,
    replaced: header.replace,
  });
  await removePosthocJournal(journalFile);
  log.info({ rewritten, calls: summary.calls }, 'post-hoc pass finished');
  return { ...summary, status: 'complete' };
}

/**
 * Opens the encoder once the sweep's whitening can take it: fitted here, or (whitening: {from}) the other
 * corpus's, which must hold this encoder (checked before opening it where its dim is known, and after).
 */
async function openCheckedEncoder(
  corpus: PosthocCorpus,
  encoder: EncoderSpec,
  source: string,
): Promise<{ opened: Encoder; column: EncoderColumn; mode: ReturnType<typeof whiteningMode> }> {
  const { out, manifest, runs } = corpus;
  const spec = sweepSpecSchema.parse(manifest.spec);
  const mode = whiteningMode(spec, manifest.spec_file);
  const promptIds = [...new Set(runs.map((r) => r.promptId))];
  const fromSource = (dim?: number) =>
    checkWhiteningSource(
      spec,
      manifest.spec_file,
      manifestPath(out),
      promptIds.map((id) => ({ id })),
      [{ name: encoder.name, dim }],
    );
  if (encoder.kind === 'hashing') fromSource(encoder.dim);
  else fromSource();
  const opened: Encoder = await openEncoder(encoder, source, 0);
  const column: EncoderColumn = { name: encoder.name, dim: opened.dim };
  try {
    fromSource(opened.dim);
  } catch (e) {
    await opened.close();
    throw e;
  }
  return { opened, column, mode };
}

/**
 * A name the corpus has is refused unless replaced (exit 2); the sweep's own encoders never are: the
 * dynamics may have read them (ssvp's divergence, early stopping), and verify checks those against them. A
 * journal left by a crash resumes only the same pass.
 */
function checkEmbedAllowed(corpus: PosthocCorpus, encoder: EncoderSpec, replace: boolean, pending: EmbedHeader | undefined): void {
  const file = manifestPath(corpus.out);
  const own = ((corpus.manifest.spec as { encoders?: { name: string }[] }).encoders ?? []).some((e) => e.name === encoder.name);
  if (pending) {
    if (JSON.stringify(pending.encoder) !== JSON.stringify(encoder))
      throw new InputError(
        posthocJournalPath(corpus.out, 'embed', encoder.name),
        'encoder',
        `an unfinished panta embed of ${encoder.name} used ${describe(pending.encoder)}, not ${describe(encoder)}`,
        `finish it with --encoder ${describe(pending.encoder)}${pending.replace ? ' --replace' : ''}, or delete the journal to start over`,
      );
    return;
  }
  if (own)
    throw new InputError(
      file,
      'encoders',
      `encoder ${encoder.name} is one of the sweep's own encoders, which the dynamics may have read`,
      'give the new encoder another name',
    );
  if (corpus.manifest.encoders.some((e) => e.name === encoder.name) && !replace)
    throw new InputError(
      file,
      'encoders',
      `the corpus has an encoder named ${encoder.name} already`,
      'give another name, or pass --replace to recompute its column',
    );
}

function describe(e: EncoderSpec): string {
  return `${e.name}:${e.kind}:${e.kind === 'hashing' ? e.dim : e.path}`;
}

/** Every answer (and team call) of a shard embedded (null for protocol calls, which carry none), in file order. */
async function embedShard(
  file: string,
  encoder: Encoder,
  progress: PosthocProgress,
  options: EmbedCorpusOptions,
): Promise<(Float32Array | null)[]> {
  const roles: string[] = [];
  const texts: string[] = [];
  for await (const batch of readEvents([file], { columns: ['role', 'response'] })) {
    const role = batch.columns.role as string[];
    const response = batch.columns.response as (string | null)[];
    for (let r = 0; r < batch.rows; r++) {
      roles.push(role[r]);
      if (isEventRole(role[r])) texts.push(response[r] ?? '');
    }
  }
  progress.inflight = texts.length;
  options.onProgress?.({ ...progress });
  const vectors = await encoder.encode(texts);
  progress.inflight = 0;
  progress.eventsExecuted += texts.length;
  let next = 0;
  return roles.map((role) => (isEventRole(role) ? vectors[next++] : null));
}

/**
 * The encoder's whitening (fitted by measureSweep, written for every prompt), its order-parameter rows merged
 * into order_params.parquet in a sweep's order (prompt by first run, run, sweep, encoder in manifest order),
 * the post-hoc judges' tables again (they copy the embedding fields of every encoder), then the manifest.
 */
async function measureEncoder(
  corpus: PosthocCorpus,
  column: EncoderColumn,
  mode: WhiteningMode,
  meta: { kind: string; model: string; replaced: boolean },
): Promise<void> {
  const { out, manifest, runs } = corpus;
  const measured = await measureSweep(
    out,
    runs.map((r) => ({ runId: r.runId, configId: r.configId, n: r.n, promptId: r.promptId })),
    [column],
    mode,
    true,
  );
  const entry = { name: column.name, kind: meta.kind, dim: column.dim, model: meta.model };
  const at = manifest.encoders.findIndex((e) => e.name === column.name);
  const encoders = at >= 0 ? manifest.encoders.map((e, i) => (i === at ? entry : e)) : [...manifest.encoders, entry];
  const stored = (await readOrderParams(orderParamsPath(out))).filter((r) => r.encoder !== column.name);
  const params = sweepOrder([...stored, ...measured.orderParams], runs, encoders);
  await writeParquetTable(orderParamsPath(out), ORDER_PARAMS_TABLE, params);
  const added: string[] = [orderParamsPath(out)];
  for (const promptId of new Set(runs.map((r) => r.promptId))) added.push(whiteningPath(out, promptId, column.name));
  for (const judge of manifest.judges ?? []) {
    await rejudgeTables(out, runs, judge.name, params, encoders[0].name, manifest);
    added.push(judgeOrderParamsPath(out, judge.name), judgeRunsTablePath(out, judge.name));
  }
  // A whitening taken from another corpus: its files' checksums, as a sweep records them, this encoder's too.
  const origin = manifest.whitening;
  const whitening =
    origin?.source === 'corpus'
      ? {
          whitening: {
            ...origin,
            files: { ...origin.files, ...(await sourceSums(origin.corpus, [...new Set(runs.map((r) => r.promptId))], column.name)) },
          },
        }
      : {};
  const next: Manifest = {
    ...manifest,
    ...whitening,
    encoders,
    posthoc: [
      ...(manifest.posthoc ?? []),
      { pass: 'embed', name: column.name, replaced: meta.replaced, finished_at: new Date().toISOString() },
    ],
    updated_at: new Date().toISOString(),
  };
  next.files = await refreshChecksums(out, manifest, added);
  writeManifest(out, next);
}

async function sourceSums(from: string, promptIds: readonly string[], encoder: string): Promise<Record<string, string>> {
  const sums: Record<string, string> = {};
  for (const p of promptIds) sums[`${p}__${encoder}`] = await sha256File(whiteningPath(from, p, encoder));
  return sums;
}

/** Rows in the order finishSweep writes them: prompts by their first run, runs in plan order, sweep, encoder. */
function sweepOrder(
  rows: OrderParamRow[],
  runs: readonly { runId: string; promptId: string }[],
  encoders: readonly { name: string }[],
): OrderParamRow[] {
  const promptRank = new Map<string, number>();
  for (const r of runs) if (!promptRank.has(r.promptId)) promptRank.set(r.promptId, promptRank.size);
  const runRank = new Map(runs.map((r, i) => [r.runId, [promptRank.get(r.promptId)!, i] as const]));
  const encoderRank = new Map(encoders.map((e, i) => [e.name, i]));
  const key = (r: OrderParamRow) => [...runRank.get(r.run_id)!, r.sweep, encoderRank.get(r.encoder)!];
  return rows.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
    return 0;
  });
}
