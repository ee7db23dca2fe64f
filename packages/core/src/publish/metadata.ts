import { parse, stringify } from 'yaml';
import { UNDOCUMENTED_COLUMN } from './columns.js';

/** One table of a published corpus: a config of the card, a FileSet and a RecordSet of croissant.json. */
export interface PublishedTable {
  /** Config name (events, runs, order_params, ...). */
  name: string;
  /** Files under data/<name>/, relative to the published folder. */
  files: { path: string; bytes: number; sha256: string }[];
  rows: number;
  /** Each column with its meaning where its table declares one. */
  columns: { name: string; type: string; meaning?: string }[];
}

export interface PublishInfo {
  title: string;
  licence: string;
  authors: string[];
  /** manifest.json of the corpus (only the fields the card reads). */
  manifest: {
    name: string;
    spec: unknown;
    code: { panta: string; node: string };
    seed: number;
    backend: { kind: string; model: string; batch_invariant?: boolean | null };
    judge: { kind: string; model: string };
    encoders: { name: string; kind: string; dim: number; model: string }[];
    runs: { planned: number; complete: number };
    events: { written: number };
    tags: Record<string, number>;
    judges?: { name: string; kind: string; model: string; tags: Record<string, number> }[];
    /** Adaptive temperatures: each configuration group's grid after its last round. */
    adaptive?: { grids: Record<string, number[]> };
  };
  tables: PublishedTable[];
  withoutEmbeddings: boolean;
  /** The post-hoc judge whose tags the publication stands on (`--judge`); absent: the sweep's own judge. */
  judge?: string;
  /** Pooled agreement of each pair of raters (the judge first) where `panta annotate score` ran (annotation.json). */
  agreement?: { a: string; b: string; n: number; agreement: number; kappa: number | null }[];
  /** ISO date of the publication. */
  date: string;
}

/** The card's YAML header keys `panta publish --check` requires (the Hub's dataset card metadata). */
export const CARD_KEYS = ['license', 'language', 'size_categories', 'task_categories', 'configs', 'pretty_name'] as const;

/** The fields Croissant 1.0 requires of a dataset (MLCommons Croissant format specification 1.0). */
export const CROISSANT_REQUIRED = ['@context', '@type', 'conformsTo', 'name', 'description', 'license', 'url', 'distribution'] as const;

export const CROISSANT_CONFORMS_TO = 'http://mlcommons.org/croissant/1.0';

/** The Hub's size categories, by row count of the largest table. */
export function sizeCategory(rows: number): string {
  const bands: [number, string][] = [
    [1e3, 'n<1K'],
    [1e4, '1K<n<10K'],
    [1e5, '10K<n<100K'],
    [1e6, '100K<n<1M'],
    [1e7, '1M<n<10M'],
    [1e8, '10M<n<100M'],
    [1e9, '100M<n<1B'],
  ];
  for (const [limit, label] of bands) if (rows < limit) return label;
  return 'n>1B';
}

/** The glob the card and croissant.json give a table's files. */
export function tableGlob(name: string): string {
  return `data/${name}/*.parquet`;
}

function spec(info: PublishInfo): Record<string, unknown> {
  const s = info.manifest.spec;
  if (s === null || typeof s !== 'object') return {};
  // The dataset file by its name: its folder is a path on the machine that ran the sweep.
  const spec = { ...(s as Record<string, unknown>) };
  if (typeof spec.dataset === 'string') spec.dataset = spec.dataset.split(/[\\/]/).pop();
  return spec;
}

/** README.md: the Hub's YAML header, then a body generated from the manifest. */
export function datasetCard(info: PublishInfo): string {
  const m = info.manifest;
  const s = spec(info);
  const lines: string[] = [
    '---',
    stringify(cardYamlHeader(info)).trimEnd(),
    '---',
    '',
    `# ${info.title}`,
    '',
    `Populations of LLM agents on interaction graphs, each agent repeatedly reading its neighbours' answers and answering again, made by Panta ${m.code.panta} from the sweep \`${m.name}\`.`,
    info.authors.length > 0 ? `Authors: ${info.authors.join(', ')}.` : '',
    '',
    ...sweepSection(info, s),
    '## Departures from the paper',
    '',
    ...(Array.isArray(s.departures) && s.departures.length > 0
      ? (s.departures as unknown[]).map((d) => `- ${String(d)}`)
      : ['None recorded: the spec lists no `departures`.']),
    '',
    ...tagsSection(info),
    '## Tables',
    '',
  ];
  lines.push(...tablesSection(info));
  lines.push(
    '## Reproduce',
    '',
    `Made by Panta ${m.code.panta} on Node ${m.code.node}. Save the spec below as \`spec.yaml\` and run \`panta run spec.yaml --out corpus\`, then \`panta verify corpus\`. A rerun gives the same answers only where the backend is batch invariant.`,
    '',
    '```yaml',
    stringify(spec(info)).trimEnd(),
    '```',
    '',
    '## Files',
    '',
    '`croissant.json` holds MLCommons Croissant 1.0 metadata with the sha256 of every file; `panta publish --check DIR` checks a copy.',
    '',
  );
  return `${lines.filter((l, i, a) => !(l === '' && a[i - 1] === '')).join('\n')}`;
}

/** The Hub's YAML header: licence, size, one config per table (events the default). */
function cardYamlHeader(info: PublishInfo): Record<string, unknown> {
  const largest = Math.max(0, ...info.tables.map((t) => t.rows));
  return {
    pretty_name: info.title,
    license: info.licence,
    language: ['en'],
    size_categories: [sizeCategory(largest)],
    task_categories: ['question-answering', 'text-generation'],
    tags: ['llm-agents', 'multi-agent', 'hallucination', 'panta'],
    configs: info.tables.map((t) => ({
      config_name: t.name,
      data_files: [{ split: 'train', path: tableGlob(t.name) }],
      ...(t.name === 'events' ? { default: true } : {}),
    })),
    dataset_info: info.tables.map((t) => ({
      config_name: t.name,
      splits: [{ name: 'train', num_examples: t.rows }],
    })),
  };
}

/** Adaptive temperatures: the grid each configuration group reached (the manifest's adaptive.grids). */
function adaptiveLines(adaptive: { grids: Record<string, number[]> } | undefined): string[] {
  if (!adaptive) return [];
  return [
    `- Temperatures reached by the adaptive rounds: ${Object.entries(adaptive.grids)
      .map(([g, t]) => `\`${g}\` ${JSON.stringify(t)}`)
      .join('; ')}`,
  ];
}

/** What the sweep ran: model, prompts, grid, judge, encoders, seed and counts. */
function sweepSection(info: PublishInfo, s: Record<string, unknown>): string[] {
  const m = info.manifest;
  const grid = (key: string) => (s[key] === undefined ? 'default' : `\`${JSON.stringify(s[key])}\``);
  return [
    '## The sweep',
    '',
    `- Model: \`${m.backend.model}\` (${m.backend.kind}); batch invariant: ${m.backend.batch_invariant ?? 'unknown'}`,
    `- Prompts: ${grid('prompts')}; dataset: ${s.dataset === undefined ? 'none' : `\`${String(s.dataset)}\``}`,
    `- Geometries: ${grid('geometries')}; sizes: ${grid('sizes')}; temperatures: ${grid('temperatures')}`,
    ...adaptiveLines(m.adaptive),
    `- Sweeps: ${grid('sweeps')}; trials: ${grid('trials')}; template: ${grid('template')}; protocols: ${grid('protocols')}`,
    `- Judge: \`${m.judge.model}\` (${m.judge.kind})`,
    `- Encoders: ${m.encoders.map((e) => `\`${e.name}\` (${e.kind}, ${e.model}, dim ${e.dim})`).join('; ') || 'none'}${info.withoutEmbeddings ? ' (embedding columns left out of this publication)' : ''}`,
    `- Seed: ${m.seed}; runs: ${m.runs.complete} of ${m.runs.planned} complete; events: ${m.events.written}`,
    '',
  ];
}

/** How the tags were produced: the sweep's judge, post-hoc judges, the judge put forward, human validation. */
function tagsSection(info: PublishInfo): string[] {
  const m = info.manifest;
  return [
    '## How the tags were produced',
    '',
    `Each answer was tagged by the sweep's judge \`${m.judge.model}\` (${m.judge.kind}) as correct, hallucinated, not_known or judge_failure against the prompt's accepted and false answers. Counts: ${Object.entries(
      m.tags,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    ...(m.judges ?? []).map(
      (j) =>
        `Post-hoc judge \`${j.name}\` (\`${j.model}\`, ${j.kind}) re-tagged the answers in \`tag_${j.name}\`: ${Object.entries(j.tags)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}.`,
    ),
    ...(info.judge === undefined
      ? []
      : [
          `The tags this publication stands on are the post-hoc judge \`${info.judge}\`'s: column \`tag_${info.judge}\` of events, and the configs \`judges_${info.judge}_order_params\` and \`judges_${info.judge}_runs\` (rho, FOCUS and drift by its tags) in place of \`order_params\` and \`runs\`.`,
        ]),
    ...(info.agreement ?? []).map(
      (p) =>
        `Human validation (panta annotate score): ${p.a} vs ${p.b} on ${p.n} answers, agreement ${(100 * p.agreement).toFixed(1)}%, Cohen's kappa ${p.kappa === null ? 'undefined' : p.kappa.toFixed(3)}.`,
    ),
    '',
  ];
}

/** One table per table: its columns, types and meanings. */
function tablesSection(info: PublishInfo): string[] {
  const lines: string[] = [];
  for (const t of info.tables) {
    lines.push(`### ${t.name} (${t.rows} rows, \`${tableGlob(t.name)}\`)`, '', '| column | type | meaning |', '| --- | --- | --- |');
    for (const c of t.columns) lines.push(`| \`${c.name}\` | ${c.type} | ${(c.meaning ?? UNDOCUMENTED_COLUMN).replace(/\|/g, '\\|')} |`);
    lines.push('');
  }
  return lines;
}

/** Croissant's data type for a DuckDB type. */
export function croissantType(sqlType: string): string {
  const t = sqlType.toUpperCase();
  if (t.endsWith(']')) return 'sc:Text';
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT)$/.test(t)) return 'sc:Integer';
  if (/^(FLOAT|DOUBLE|REAL|DECIMAL.*)$/.test(t)) return 'sc:Float';
  if (t === 'BOOLEAN') return 'sc:Boolean';
  if (t.startsWith('TIMESTAMP') || t === 'DATE') return 'sc:Date';
  return 'sc:Text';
}

/** croissant.json: Croissant 1.0 metadata, every file with its sha256, one record set per table. */
export function croissant(info: PublishInfo): Record<string, unknown> {
  const m = info.manifest;
  const distribution = croissantFiles(info);
  return {
    '@context': CROISSANT_CONTEXT,
    '@type': 'sc:Dataset',
    conformsTo: CROISSANT_CONFORMS_TO,
    name: m.name,
    description: `${info.title}: populations of LLM agents on interaction graphs (model ${m.backend.model}, judge ${m.judges?.find((j) => j.name === info.judge)?.model ?? m.judge.model}), ${m.events.written} events of ${m.runs.planned} runs, made by Panta ${m.code.panta}.`,
    license: info.licence,
    url: `https://huggingface.co/datasets/${m.name}`,
    version: '1.0.0',
    datePublished: info.date,
    creator: info.authors.map((name) => ({ '@type': 'sc:Person', name })),
    isAccessibleForFree: true,
    distribution,
    recordSet: info.tables.map(recordSet),
  };
}

/** The JSON-LD context of croissant.json. */
const CROISSANT_CONTEXT = {
  '@language': 'en',
  '@vocab': 'https://schema.org/',
  citeAs: 'cr:citeAs',
  column: 'cr:column',
  conformsTo: 'dct:conformsTo',
  cr: 'http://mlcommons.org/croissant/',
  rai: 'http://mlcommons.org/croissant/RAI/',
  data: { '@id': 'cr:data', '@type': '@json' },
  dataType: { '@id': 'cr:dataType', '@type': '@vocab' },
  dct: 'http://purl.org/dc/terms/',
  examples: { '@id': 'cr:examples', '@type': '@json' },
  extract: 'cr:extract',
  field: 'cr:field',
  fileProperty: 'cr:fileProperty',
  fileObject: 'cr:fileObject',
  fileSet: 'cr:fileSet',
  format: 'cr:format',
  includes: 'cr:includes',
  isLiveDataset: 'cr:isLiveDataset',
  jsonPath: 'cr:jsonPath',
  key: 'cr:key',
  md5: 'cr:md5',
  parentField: 'cr:parentField',
  path: 'cr:path',
  recordSet: 'cr:recordSet',
  references: 'cr:references',
  regex: 'cr:regex',
  repeated: 'cr:repeated',
  replace: 'cr:replace',
  sc: 'https://schema.org/',
  separator: 'cr:separator',
  source: 'cr:source',
  subField: 'cr:subField',
  transform: 'cr:transform',
};

/** Every file of every table with its sha256, and a file set per table. */
function croissantFiles(info: PublishInfo): Record<string, unknown>[] {
  const distribution: Record<string, unknown>[] = [];
  for (const t of info.tables) {
    for (const f of t.files)
      distribution.push({
        '@type': 'cr:FileObject',
        '@id': f.path,
        name: f.path,
        contentUrl: f.path,
        encodingFormat: 'application/x-parquet',
        contentSize: `${f.bytes} B`,
        sha256: f.sha256,
      });
    distribution.push({
      '@type': 'cr:FileSet',
      '@id': `${t.name}-files`,
      name: `${t.name}-files`,
      encodingFormat: 'application/x-parquet',
      includes: tableGlob(t.name),
    });
  }
  return distribution;
}

/** A table's record set: one field per column, extracted from the table's file set. */
function recordSet(t: PublishInfo['tables'][number]): Record<string, unknown> {
  return {
    '@type': 'cr:RecordSet',
    '@id': t.name,
    name: t.name,
    description: `${t.name}: ${t.rows} rows`,
    field: t.columns.map((c) => ({
      '@type': 'cr:Field',
      '@id': `${t.name}/${c.name}`,
      name: c.name,
      description: c.meaning ?? UNDOCUMENTED_COLUMN,
      dataType: croissantType(c.type.replace(/(\[\d*\])+$/, '')),
      ...(c.type.endsWith(']') ? { repeated: true } : {}),
      source: { fileSet: { '@id': `${t.name}-files` }, extract: { column: c.name } },
    })),
  };
}

/** The YAML header of a dataset card, or null when it has none. */
export function cardHeader(text: string): Record<string, unknown> | null {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text);
  if (!m) return null;
  const header = parse(m[1]!) as unknown;
  return header !== null && typeof header === 'object' ? (header as Record<string, unknown>) : null;
}
