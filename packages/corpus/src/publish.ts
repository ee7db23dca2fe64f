import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import {
  CARD_KEYS,
  cardHeader,
  CROISSANT_CONFORMS_TO,
  EVENT_ROWS_SQL,
  CROISSANT_REQUIRED,
  croissant,
  datasetCard,
  InputError,
  type PublishedTable,
  type PublishInfo,
  redact,
  registerSecret,
  tableGlob,
} from '@panta/core';
import { declaredMeaning } from './corpus-tables.js';
import { CORPUS_FILES, manifestPath } from './corpus-paths.js';
import { sqlString } from './duckdb.js';
import { type Manifest, readManifest, sha256File } from './manifest.js';
import { queryRows } from './parquet-table.js';

/** Published Parquet files are cut at about this size: the Hub's viewer and its loaders handle them well. */
const FILE_SIZE = '256MB';

export interface PublishOptions {
  out: string;
  licence?: string;
  title?: string;
  authors?: string[];
  withoutEmbeddings?: boolean;
  /** The post-hoc judge (`panta judge --name`) whose tags the card puts forward. */
  judge?: string;
}

/**
 * The tables of a corpus by the Parquet files its manifest lists: a top-level file is its own table
 * (runs, order_params, stats, teams, a study's), events/ and whitening/ are one table each, and a post-hoc
 * judge's files are `judges_<name>_<table>`.
 */
export function corpusTables(files: readonly string[]): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  for (const f of [...files].sort()) {
    if (!f.endsWith('.parquet')) continue;
    const parts = f.split('/');
    const base = parts[parts.length - 1]!.replace(/\.parquet$/, '');
    const name =
      parts.length === 1 ? base : parts[0] === 'events' || parts[0] === 'whitening' ? parts[0] : [...parts.slice(0, -1), base].join('_');
    const config = name.toLowerCase().replace(/[^a-z0-9_]+/g, '_');
    tables.set(config, [...(tables.get(config) ?? []), f]);
  }
  return tables;
}

/** Every key a backend of the spec reads from the environment (`api_key_env`), registered with the redactor. */
function registerSpecSecrets(value: unknown): void {
  if (Array.isArray(value)) for (const v of value) registerSpecSecrets(v);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (k === 'api_key_env' && typeof v === 'string') registerSecret(process.env[v]);
      else registerSpecSecrets(v);
    }
}

const readList = (files: string[], filename = false) =>
  `read_parquet([${files.map(sqlString).join(', ')}], union_by_name = true${filename ? ', filename = true' : ''})`;

/**
 * `panta publish`: the corpus as a dataset repository the Hugging Face Hub takes as it is: data/<table>/*.parquet,
 * README.md (dataset card) and croissant.json, nothing private (no .state, logs, journals, lock; every text
 * redacted). Written under a temporary name and renamed, so a failure leaves nothing at --out.
 */
export async function publishCorpus(dir: string, opts: PublishOptions): Promise<{ tables: PublishedTable[] }> {
  const manifest = readManifest(dir);
  if (!manifest) throw new InputError(manifestPath(dir), '', 'no corpus manifest here', 'give the folder panta run wrote');
  if (existsSync(opts.out) && (!statSync(opts.out).isDirectory() || readdirSync(opts.out).length > 0))
    throw new InputError(opts.out, '--out', 'exists and is not an empty folder', 'give a new folder (publish never overwrites)');
  if (manifest.status !== 'complete' || manifest.shard !== undefined)
    throw new InputError(
      manifestPath(dir),
      'status',
      manifest.shard !== undefined ? 'is one part of a job array' : `is ${manifest.status}, not complete`,
      manifest.shard !== undefined
        ? 'panta merge the parts and publish the merged corpus'
        : 'finish the sweep (panta run resumes it) and panta verify it first',
    );
  if (`${resolve(opts.out)}${sep}`.startsWith(`${resolve(dir)}${sep}`))
    throw new InputError(
      opts.out,
      '--out',
      'is inside the corpus (its Parquet files would be strays panta verify refuses)',
      'give a folder outside the corpus',
    );
  const licence = (opts.licence ?? 'cc-by-4.0').toLowerCase();
  if (!/^[a-z0-9][a-z0-9.+-]*$/.test(licence))
    throw new InputError(
      opts.out,
      '--licence',
      `${opts.licence} is not a licence identifier`,
      'use a Hub licence id such as cc-by-4.0, mit or apache-2.0',
    );
  if (opts.judge !== undefined && !(manifest.judges ?? []).some((j) => j.name === opts.judge)) {
    const names = (manifest.judges ?? []).map((j) => j.name);
    throw new InputError(
      manifestPath(dir),
      '--judge',
      `no post-hoc judge named ${opts.judge}`,
      names.length > 0
        ? `use one of ${names.join(', ')}, or leave --judge out for the sweep's judge`
        : "leave --judge out (the sweep's judge) or run panta judge first",
    );
  }
  registerSpecSecrets(manifest.spec);
  const tmp = `${opts.out.replace(/\/+$/, '')}.publish-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    const tables = await writeTables(dir, tmp, manifest, opts.withoutEmbeddings ?? false);
    const info = {
      title: opts.title ?? manifest.name,
      licence,
      authors: opts.authors ?? [],
      manifest,
      tables,
      withoutEmbeddings: opts.withoutEmbeddings ?? false,
      agreement: pooledAgreement(dir),
      judge: opts.judge,
      date: new Date().toISOString().slice(0, 10),
    };
    writeFileSync(join(tmp, 'README.md'), redact(datasetCard(info)));
    writeFileSync(join(tmp, 'croissant.json'), `${redact(JSON.stringify(croissant(info), null, 2))}\n`);
    if (existsSync(opts.out)) rmSync(opts.out, { recursive: true });
    mkdirSync(dirname(opts.out), { recursive: true });
    renameSync(tmp, opts.out);
    return { tables };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** The pooled rater pairs of annotation.json (`panta annotate score`), or none. */
function pooledAgreement(dir: string): PublishInfo['agreement'] {
  const file = join(dir, CORPUS_FILES.annotation);
  if (!existsSync(file)) return undefined;
  const record = JSON.parse(readFileSync(file, 'utf8')) as {
    pairs?: { scope: string; a: string; b: string; n: number; agreement: number; kappa: number | null }[];
  };
  return (record.pairs ?? []).filter((p) => p.scope === 'pooled').map(({ a, b, n, agreement, kappa }) => ({ a, b, n, agreement, kappa }));
}

/** The column publish adds to the whitening table. */
const POOL_MEANING = 'the whitening pool: PROMPT__ENCODER (the file it came from)';

async function writeTables(dir: string, out: string, manifest: Manifest, withoutEmbeddings: boolean): Promise<PublishedTable[]> {
  const tables: PublishedTable[] = [];
  for (const [name, files] of corpusTables(Object.keys(manifest.files))) {
    if (withoutEmbeddings && name === 'whitening') continue;
    const source = readList(
      files.map((f) => join(dir, f)),
      name === 'whitening',
    );
    let select = withoutEmbeddings ? `COLUMNS(c -> NOT starts_with(c, 'emb_'))` : '*';
    // Whitening files are one per (prompt, encoder), named <prompt>__<encoder>: the name becomes a column (pool).
    if (name === 'whitening') select = `* EXCLUDE (filename), regexp_extract(filename, '([^/\\\\]+)\\.parquet$', 1) AS pool`;
    const target = join(out, 'data', name);
    mkdirSync(dirname(target), { recursive: true });
    await queryRows(
      `COPY (SELECT ${select} FROM ${source}) TO ${sqlString(target)} (FORMAT parquet, COMPRESSION zstd, FILE_SIZE_BYTES '${FILE_SIZE}', FILENAME_PATTERN 'part-{i}')`,
    );
    const glob = join(out, tableGlob(name));
    const rows = Number((await queryRows(`SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(glob)})`))[0]!.n);
    // events.written counts the event rows (an agent's or a team role's answer), as verify does: a protocol's extra
    // calls (summaries, merges, votes) are rows of the events table too but no event of the plan.
    const counted =
      name === 'events'
        ? Number((await queryRows(`SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(glob)}) WHERE ${EVENT_ROWS_SQL}`))[0]!.n)
        : rows;
    const expected = name === 'events' ? manifest.events.written : name === 'runs' ? manifest.runs.planned : undefined;
    if (expected !== undefined && counted !== expected)
      throw new Error(
        `${name}: the corpus holds ${counted} ${name === 'events' ? 'event rows' : 'rows'}, its manifest says ${expected}; run panta verify ${dir}`,
      );
    const columns = (await queryRows(`DESCRIBE SELECT * FROM read_parquet(${sqlString(glob)})`)).map((r) => ({
      name: String(r.column_name),
      type: String(r.column_type),
      meaning: r.column_name === 'pool' && name === 'whitening' ? POOL_MEANING : declaredMeaning(name, String(r.column_name)),
    }));
    const published = [];
    for (const f of readdirSync(target).sort()) {
      const file = join(target, f);
      published.push({ path: relative(out, file), bytes: statSync(file).size, sha256: await sha256File(file) });
    }
    tables.push({ name, files: published, rows, columns });
  }
  return tables;
}

function filesUnder(root: string, at = root): string[] {
  const out: string[] = [];
  for (const e of readdirSync(at, { withFileTypes: true })) {
    const p = join(at, e.name);
    if (e.isDirectory()) out.push(...filesUnder(root, p));
    else out.push(relative(root, p));
  }
  return out.sort();
}

/**
 * `panta publish --check`: a published folder against itself. The card's header holds the Hub's keys, croissant.json
 * Croissant 1.0's required fields, every file is listed there with its sha256 (and every listed file is there), and
 * DuckDB reads each config through the card's globs with the row counts the card gives. Returns the problems.
 */
export async function checkPublished(dir: string): Promise<string[]> {
  const problems: string[] = [];
  const readme = join(dir, 'README.md');
  let header: Record<string, unknown> | null = null;
  if (!existsSync(readme)) problems.push('README.md: missing');
  else {
    try {
      header = cardHeader(readFileSync(readme, 'utf8'));
      if (!header) problems.push('README.md: no YAML header between --- lines');
    } catch (e) {
      problems.push(`README.md: the YAML header does not parse (${(e as Error).message.split('\n')[0]})`);
    }
    for (const key of header ? CARD_KEYS : []) if (header![key] === undefined) problems.push(`README.md: the card header has no ${key}`);
  }
  let meta: Record<string, unknown> = {};
  try {
    meta = JSON.parse(readFileSync(join(dir, 'croissant.json'), 'utf8')) as Record<string, unknown>;
  } catch (e) {
    problems.push(`croissant.json: ${existsSync(join(dir, 'croissant.json')) ? `does not parse (${(e as Error).message})` : 'missing'}`);
  }
  for (const key of CROISSANT_REQUIRED) if (meta[key] === undefined) problems.push(`croissant.json: required field ${key} is missing`);
  if (meta['@type'] !== undefined && meta['@type'] !== 'sc:Dataset')
    problems.push(`croissant.json: @type is ${JSON.stringify(meta['@type'])}, not sc:Dataset`);
  if (meta.conformsTo !== undefined && meta.conformsTo !== CROISSANT_CONFORMS_TO)
    problems.push(`croissant.json: conformsTo is ${JSON.stringify(meta.conformsTo)}, not ${CROISSANT_CONFORMS_TO}`);
  const listed = new Map<string, string | undefined>();
  for (const d of Array.isArray(meta.distribution) ? (meta.distribution as Record<string, unknown>[]) : [])
    if (d['@type'] === 'cr:FileObject') listed.set(String(d.contentUrl), typeof d.sha256 === 'string' ? d.sha256 : undefined);
  for (const [file, sha] of listed) {
    const path = join(dir, file);
    if (file.startsWith('/') || relative(dir, path).startsWith('..'))
      problems.push(`${file}: croissant.json lists a file outside the folder`);
    else if (!existsSync(path)) problems.push(`${file}: listed in croissant.json but missing`);
    else if (sha === undefined) problems.push(`${file}: croissant.json gives no sha256`);
    else if ((await sha256File(path)) !== sha) problems.push(`${file}: sha256 does not match croissant.json`);
  }
  for (const file of existsSync(dir) ? filesUnder(dir) : [])
    if (file !== 'README.md' && file !== 'croissant.json' && !listed.has(file)) problems.push(`${file}: not listed in croissant.json`);
  const counts = new Map<string, number>();
  for (const info of Array.isArray(header?.dataset_info) ? (header.dataset_info as Record<string, unknown>[]) : []) {
    const splits = Array.isArray(info.splits) ? (info.splits as Record<string, unknown>[]) : [];
    counts.set(
      String(info.config_name),
      splits.reduce((s, x) => s + Number(x.num_examples ?? 0), 0),
    );
  }
  for (const config of Array.isArray(header?.configs) ? (header.configs as Record<string, unknown>[]) : []) {
    const name = String(config.config_name);
    const globs = (Array.isArray(config.data_files) ? (config.data_files as Record<string, unknown>[]) : []).map((f) => String(f.path));
    if (globs.length === 0) {
      problems.push(`README.md: config ${name} has no data_files`);
      continue;
    }
    try {
      const list = globs.map((g) => sqlString(join(dir, g))).join(', ');
      const rows = Number((await queryRows(`SELECT count(*)::BIGINT AS n FROM read_parquet([${list}], union_by_name = true)`))[0]!.n);
      if (counts.has(name) && counts.get(name) !== rows)
        problems.push(`config ${name}: DuckDB reads ${rows} rows through ${globs.join(', ')}, the card says ${counts.get(name)}`);
    } catch (e) {
      problems.push(`config ${name}: DuckDB cannot read ${globs.join(', ')} (${(e as Error).message.split('\n')[0]})`);
    }
  }
  return problems;
}
