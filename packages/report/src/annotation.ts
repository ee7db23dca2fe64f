import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import {
  CsvSyntaxError,
  csvLine,
  InputError,
  parseCsv,
  raterPairs,
  rngFrom,
  stratifiedSample,
  type PairAgreement,
  type RatedItem,
} from '@panta/core';
import { annotationPath, queryRows, readParquetSql, shardPath, sqlIdent, sqlString, tagColumnName, type Manifest } from '@panta/corpus';
import { completeShards, readCorpusManifest } from './load-corpus.js';

/** The labels a human gives (the judge's fourth tag, judge_failure, is no verdict to validate). */
export const HUMAN_LABELS = ['correct', 'hallucinated', 'not_known'] as const;

/** The CSV columns of a sample: what maps back to the row, what the annotator reads, what they fill in. */
const SAMPLE_COLUMNS = ['id', 'run_id', 'event', 'sweep', 'agent', 'prompt_id', 'question', 'response', 'label', 'comment'] as const;

export const SAMPLING_METHOD =
  "Pool: every agent answer of the corpus's complete runs that the judge tagged correct, hallucinated or not_known (judge failures are left out). " +
  'Coverage: for each configuration in turn (config_id order) one answer is drawn, of the tag present in it that has the fewest answers drawn so far ' +
  '(ties: the tag rarer in the pool). Then equal allocation over tags: each further answer goes to the tag with the fewest drawn so far among the ' +
  'tags with answers left, a uniformly random one of them, so a tag rarer than n / 3 is taken whole and the rest are split evenly (rare tags oversampled; ' +
  "the sample's tag frequencies do not mirror the corpus). Rows are then put in a random order and numbered. Every draw comes from the seed.";

export interface ExportOptions {
  n: number;
  /** Stratify on this post-hoc judge's tags (`panta judge --name`) instead of the sweep's judge. */
  judge?: string;
  /** Default: the corpus's seed. */
  seed?: number;
  /** CSV to write (default `annotation-sample.csv` in the working folder); never overwritten. */
  out?: string;
}

export interface ExportResult {
  out: string;
  sidecar: string;
  n: number;
  seed: number;
  configurations: number;
  perTag: Record<string, { drawn: number; available: number }>;
}

/** The side file that documents a sample: `x.csv` -> `x.sampling.json`. */
export function samplingSidecar(csv: string): string {
  return csv.replace(/(\.csv)?$/i, '.sampling.json');
}

/** Every prompt's question, from the manifest's copy of the prompt set. */
function questions(manifest: { prompts: unknown[] }): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of manifest.prompts as { id?: unknown; question?: unknown }[])
    if (typeof p?.id === 'string' && typeof p.question === 'string') out.set(p.id, p.question);
  return out;
}

/**
 * `panta annotate export`: a stratified, seeded, blind sample of a corpus's answers as CSV (judge verdict
 * left out, `label` and `comment` empty), with a side file saying how it was drawn.
 */
export async function exportAnnotationSample(dir: string, options: ExportOptions): Promise<ExportResult> {
  const manifest = readCorpusManifest(dir);
  const out = resolve(options.out ?? 'annotation-sample.csv');
  const sidecar = samplingSidecar(out);
  for (const f of [out, sidecar])
    if (existsSync(f))
      throw new InputError(
        f,
        '--out',
        'exists (a sample is never overwritten: it may hold labels)',
        'give another --out, or remove the file',
      );
  if (!Number.isInteger(options.n) || options.n < 1)
    throw new InputError(dir, '--n', `${options.n} is not a positive whole number`, 'give --n 1063, say');
  const seed = options.seed ?? manifest.seed;
  const runs = [...completeShards(dir)].sort();
  if (runs.length === 0) throw new InputError(dir, 'events', 'no complete run to sample from', 'run the sweep to completion first');
  const files = readParquetSql(runs.map((r) => shardPath(dir, r)));
  const tag = tagColumn(dir, manifest, options.judge);
  const judged = `role = 'agent' AND ${tag} IN ('correct', 'hallucinated', 'not_known')`;
  // Counted per (configuration, tag), sampled on the counts, then mapped back by a stable order within each
  // stratum (run_id, event): nothing per answer is held in this process.
  const strata = (
    await queryRows(
      `SELECT config_id, ${tag} AS tag, count(*)::BIGINT AS n FROM ${files} WHERE ${judged} GROUP BY ALL ORDER BY config_id, tag`,
    )
  ).map((r) => ({ group: String(r.config_id), cls: String(r.tag), size: Number(r.n) }));
  const pool = strata.reduce((s, x) => s + x.size, 0);
  const configurations = strata.length === 0 ? 0 : new Set(strata.map((s) => s.group)).size;
  if (options.n < configurations || options.n > pool)
    throw new InputError(
      dir,
      '--n',
      `${options.n} cannot cover ${configurations} configurations from ${pool} judged answers`,
      `give --n between ${configurations} and ${pool}`,
    );
  const sample = stratifiedSample(strata, options.n, seed);
  // Shown in a random order, so a row's position says nothing of its configuration or how it was drawn.
  const order = shuffledOrder(sample.picked.length, seed);
  const picked = await pickedAnswers(files, tag, judged, strata, sample.picked, order);
  const lines = await sampleLines(dir, manifest, picked);
  const doc = {
    corpus: resolve(dir),
    fingerprint: manifest.fingerprint,
    n: options.n,
    seed,
    configurations,
    stratified_on:
      options.judge === undefined ? 'tag (the sweep judge)' : `${tagColumnName(options.judge)} (post-hoc judge ${options.judge})`,
    per_tag: sample.perClass,
    method: SAMPLING_METHOD,
    labels: HUMAN_LABELS,
    instructions:
      'Fill the label column of every row with correct, hallucinated or not_known (the answer neither right nor wrong: a refusal, "I do not know", off topic); ' +
      'comment is free. Do not look up the judge tags. Then: panta annotate score CORPUS FILE...',
  };
  writeAtomic(sidecar, `${JSON.stringify(doc, null, 1)}\n`);
  writeAtomic(out, `${lines.join('\r\n')}\r\n`);
  return { out, sidecar, n: options.n, seed, configurations, perTag: sample.perClass };
}

/** 0..n-1 in a seeded random order. */
function shuffledOrder(n: number, seed: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  const rng = rngFrom(seed, 'annotation-order');
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The (run, event) of each draw, by its stable position within its stratum (run_id, event), in `order`. */
async function pickedAnswers(
  files: string,
  tag: string,
  judged: string,
  strata: readonly { group: string; cls: string }[],
  draws: readonly { stratum: number; index: number }[],
  order: readonly number[],
): Promise<{ run_id: string; event: number }[]> {
  const wanted = draws
    .map((p, i) => `(${sqlString(strata[p.stratum].group)}, ${sqlString(strata[p.stratum].cls)}, ${p.index}, ${i})`)
    .join(', ');
  const keys = await queryRows(
    `SELECT w.draw, s.run_id, s.event FROM (
       SELECT run_id, event, config_id, ${tag} AS tag, row_number() OVER (PARTITION BY config_id, ${tag} ORDER BY run_id, event) - 1 AS pos FROM ${files} WHERE ${judged}
     ) s JOIN (VALUES ${wanted}) w(config_id, tag, pos, draw) USING (config_id, tag, pos)`,
  );
  const keyOfDraw = new Map(keys.map((k) => [Number(k.draw), { run_id: String(k.run_id), event: Number(k.event) }]));
  return order.map((i) => keyOfDraw.get(i)!);
}

/** The sample's CSV lines: the header, then one blind row per picked answer (label and comment empty). */
async function sampleLines(dir: string, manifest: Manifest, picked: readonly { run_id: string; event: number }[]): Promise<string[]> {
  const rows = await queryRows(
    `SELECT run_id, event, sweep, agent, prompt_id, response FROM ${readParquetSql([...new Set(picked.map((r) => shardPath(dir, r.run_id)))])}
     WHERE (run_id, event) IN (${picked.map((r) => `(${sqlString(r.run_id)}, ${r.event})`).join(', ')})`,
  );
  const byKey = new Map(rows.map((r) => [`${r.run_id}\u0000${Number(r.event)}`, r]));
  const q = questions(manifest);
  const width = String(picked.length).length;
  const lines = [csvLine(SAMPLE_COLUMNS)];
  picked.forEach((p, i) => {
    const r = byKey.get(`${p.run_id}\u0000${p.event}`)!;
    lines.push(
      csvLine([
        `a${String(i + 1).padStart(width, '0')}`,
        String(r.run_id),
        Number(r.event),
        Number(r.sweep),
        Number(r.agent),
        String(r.prompt_id),
        q.get(String(r.prompt_id)) ?? '',
        r.response === null ? '' : String(r.response),
        '',
        '',
      ]),
    );
  });
  return lines;
}

/** Post-hoc judges of the corpus (`panta judge`), whose tags are in a column of their own. */
function posthocJudges(manifest: Manifest): string[] {
  return (manifest.judges ?? []).map((j) => j.name);
}

/** The SQL column of a judge's tags: `tag` for the sweep's judge, `tag_<name>` for a post-hoc one (checked). */
function tagColumn(dir: string, manifest: Manifest, judge: string | undefined): string {
  if (judge === undefined) return 'tag';
  const known = posthocJudges(manifest);
  if (!known.includes(judge))
    throw new InputError(
      dir,
      '--judge',
      `${JSON.stringify(judge)} is no post-hoc judge of this corpus`,
      known.length > 0
        ? `use one of ${known.join(', ')}, or leave --judge out for the sweep's judge`
        : "leave --judge out: the corpus has only the sweep's judge",
    );
  return sqlIdent(tagColumnName(judge));
}

function writeAtomic(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

/** What `panta annotate score` leaves in the corpus (annotation.json) for the report's Table 8. */
export interface AnnotationRecord {
  format: 'panta-annotation/1';
  scored_at: string;
  fingerprint: string;
  /** `judge` first, then one per annotator file (its name without .csv). */
  raters: string[];
  files: Record<string, string>;
  items: { id: string; run_id: string; event: number; prompt_id: string; labels: Record<string, string> }[];
  /** Every pair, pooled over every prompt and per prompt (the report recomputes pooled rows under exclusions). */
  pairs: PairAgreement[];
}

interface Labelled {
  id: string;
  run_id: string;
  event: number;
  label: string;
}

/** One annotator's file, checked row by row: one-line InputError naming file, row, field and fix. */
export function readAnnotatorFile(file: string): Labelled[] {
  if (!existsSync(file))
    throw new InputError(file, '', 'no such file', 'give the CSV an annotator filled in (panta annotate export writes it)');
  let records: string[][];
  try {
    records = parseCsv(readFileSync(file, 'utf8'));
  } catch (e) {
    if (e instanceof CsvSyntaxError) throw new InputError(file, `record ${e.record}`, e.problem, 'save the file as CSV again');
    throw e;
  }
  const header = (records[0] ?? []).map((h) => h.trim());
  for (const col of ['id', 'run_id', 'event', 'label'])
    if (!header.includes(col)) throw new InputError(file, col, 'column missing', 'keep the header panta annotate export wrote');
  const at = (col: string) => header.indexOf(col);
  const seen = new Set<string>();
  const out: Labelled[] = [];
  records.slice(1).forEach((rec, i) => {
    const row = i + 2; // the header is row 1, as a spreadsheet numbers them
    const id = (rec[at('id')] ?? '').trim();
    const where = `row ${row}${id ? ` (id ${id})` : ''}`;
    if (!id) throw new InputError(file, `${where}: id`, 'empty', 'keep the id panta annotate export wrote');
    if (seen.has(id)) throw new InputError(file, `${where}: id`, 'appears twice', 'keep one row per id');
    seen.add(id);
    // "Not known" and "not-known" are what people type for not_known.
    const label = (rec[at('label')] ?? '')
      .trim()
      .toLowerCase()
      .replace(/[\s-]+/g, '_');
    if (!(HUMAN_LABELS as readonly string[]).includes(label))
      throw new InputError(
        file,
        `${where}: label`,
        label ? `${JSON.stringify(rec[at('label')])} is not a label` : 'empty',
        `write ${HUMAN_LABELS.join(', ')}`,
      );
    const event = Number((rec[at('event')] ?? '').trim());
    if (!Number.isInteger(event) || event < 0)
      throw new InputError(
        file,
        `${where}: event`,
        `${JSON.stringify(rec[at('event')])} is not an event number`,
        'keep the event panta annotate export wrote',
      );
    out.push({ id, run_id: (rec[at('run_id')] ?? '').trim(), event, label });
  });
  if (out.length === 0) throw new InputError(file, '', 'no labelled row', 'label the rows of the sample');
  return out;
}

export interface ScoreResult {
  record: AnnotationRecord;
  written: string;
}

/** `panta annotate score`: annotators' labels against the judge's tags and each other's; writes annotation.json. */
export async function scoreAnnotations(dir: string, files: readonly string[]): Promise<ScoreResult> {
  const manifest = readCorpusManifest(dir);
  if (files.length === 0) throw new InputError(dir, 'FILE', 'no annotator file given', 'give one CSV per annotator');
  refuseRepeatedFiles(files);
  const { names, byRater, fileOf } = readRaters(files);
  const keyOfId = answerKeys(dir, byRater, fileOf);
  // Every judge is a rater: the sweep's (`judge`) and each post-hoc one (`judge:<name>`, its tag_<name> column).
  const posthoc = posthocJudges(manifest);
  const items = await labelledItems(dir, keyOfId, byRater, posthoc);
  const raters = ['judge', ...posthoc.map((j) => `judge:${j}`), ...names];
  const rated: RatedItem[] = items.map((it) => ({ prompt: it.prompt_id, labels: it.labels }));
  const record: AnnotationRecord = {
    format: 'panta-annotation/1',
    scored_at: new Date().toISOString(),
    fingerprint: manifest.fingerprint,
    raters,
    files: fileOf,
    items,
    pairs: raterPairs(rated, raters),
  };
  const written = annotationPath(resolve(dir));
  writeAtomic(written, `${JSON.stringify(record, null, 1)}\n`);
  return { record, written };
}

/**
 * One annotator's file given twice (the same path, a link to it, or a copy) would be scored as two raters
 * in perfect agreement: refused, by real path and by content.
 */
function refuseRepeatedFiles(files: readonly string[]): void {
  const seenFile = new Map<string, string>();
  for (const f of files) {
    if (!existsSync(f)) continue; // readAnnotatorFile names it below
    const real = realpathSync(f);
    const digest = `sha256:${createHash('sha256').update(readFileSync(f)).digest('hex')}`;
    const same = seenFile.get(real) ?? seenFile.get(digest);
    if (same !== undefined)
      throw new InputError(
        f,
        '',
        seenFile.get(real) !== undefined ? `is the same file as ${same}, given twice` : `has the same content as ${same}`,
        "give each annotator's own CSV once (one file scored as two raters agrees with itself)",
      );
    seenFile.set(real, f);
    seenFile.set(digest, f);
  }
}

/** Each annotator's rows by a name of their own (the file's, numbered when two share it; never a judge's), and their files. */
function readRaters(files: readonly string[]): { names: string[]; byRater: Map<string, Labelled[]>; fileOf: Record<string, string> } {
  const names: string[] = [];
  const byRater = new Map<string, Labelled[]>();
  const fileOf: Record<string, string> = {};
  for (const f of files) {
    let name = basename(f).replace(/\.csv$/i, '');
    for (let k = 2; name === 'judge' || name.startsWith('judge:') || names.includes(name); k++)
      name = `${basename(f).replace(/\.csv$/i, '')}-${k}`;
    names.push(name);
    byRater.set(name, readAnnotatorFile(f));
    fileOf[name] = resolve(f);
  }
  return { names, byRater, fileOf };
}

type AnswerKey = { run_id: string; event: number; file: string };

/** Every row must name an answer of the corpus, the same one in every file that has its id: the answer of each id. */
function answerKeys(dir: string, byRater: Map<string, Labelled[]>, fileOf: Record<string, string>): Map<string, AnswerKey> {
  const shards = completeShards(dir);
  const keyOfId = new Map<string, AnswerKey>();
  for (const [name, rows] of byRater) {
    for (const r of rows) {
      const where = `${fileOf[name]}`;
      if (!shards.has(r.run_id))
        throw new InputError(
          where,
          `id ${r.id}: run_id`,
          `${JSON.stringify(r.run_id)} is no complete run of ${dir}`,
          'score against the corpus the sample was exported from',
        );
      const before = keyOfId.get(r.id);
      if (before && (before.run_id !== r.run_id || before.event !== r.event))
        throw new InputError(where, `id ${r.id}`, `names another answer than in ${before.file}`, 'score files exported as one sample');
      keyOfId.set(r.id, { run_id: r.run_id, event: r.event, file: where });
    }
  }
  return keyOfId;
}

/** Each scored answer with every rater's label: the judges' tags read from the corpus, then the annotators'. */
async function labelledItems(
  dir: string,
  keyOfId: Map<string, AnswerKey>,
  byRater: Map<string, Labelled[]>,
  posthoc: readonly string[],
): Promise<AnnotationRecord['items']> {
  const keys = [...keyOfId.values()];
  const tags = await queryRows(
    `SELECT run_id, event, prompt_id, tag${posthoc.length > 0 ? `, ${posthoc.map((j, i) => `${sqlIdent(tagColumnName(j))} AS j${i}`).join(', ')}` : ''} FROM ${readParquetSql([...new Set(keys.map((k) => shardPath(dir, k.run_id)))])}
     WHERE (run_id, event) IN (${keys.map((k) => `(${sqlString(k.run_id)}, ${k.event})`).join(', ')})`,
  );
  const tagOf = new Map(tags.map((t) => [`${t.run_id}\u0000${Number(t.event)}`, t]));
  const byId = new Map([...byRater].map(([name, rows]) => [name, new Map(rows.map((r) => [r.id, r]))]));
  const items: AnnotationRecord['items'] = [];
  for (const [id, k] of [...keyOfId].sort((a, b) => a[0].localeCompare(b[0]))) {
    const t = tagOf.get(`${k.run_id}\u0000${k.event}`);
    if (!t)
      throw new InputError(
        k.file,
        `id ${id}: event`,
        `run ${k.run_id} has no event ${k.event}`,
        'keep the event panta annotate export wrote',
      );
    const labels: Record<string, string> = { judge: t.tag === null ? 'untagged' : String(t.tag) };
    posthoc.forEach((j, i) => {
      const v = t[`j${i}`];
      labels[`judge:${j}`] = v === null || v === undefined ? 'untagged' : String(v);
    });
    for (const [name, rows] of byId) {
      const r = rows.get(id);
      if (r) labels[name] = r.label;
    }
    items.push({ id, run_id: k.run_id, event: k.event, prompt_id: String(t.prompt_id), labels });
  }
  return items;
}

/** The annotation record of a corpus, or null when none was scored. */
export function readAnnotation(dir: string): AnnotationRecord | null {
  const file = annotationPath(dir);
  if (!existsSync(file)) return null;
  const fix = 'run panta annotate score again, or remove the file';
  let r: AnnotationRecord;
  try {
    r = JSON.parse(readFileSync(file, 'utf8')) as AnnotationRecord;
  } catch (e) {
    throw new InputError(file, '', `unreadable (${(e as Error).message})`, fix);
  }
  if (r?.format !== 'panta-annotation/1' || !Array.isArray(r.items) || !Array.isArray(r.raters))
    throw new InputError(file, 'format', `${JSON.stringify(r?.format)} is not panta-annotation/1`, fix);
  return r;
}
