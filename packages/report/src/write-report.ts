import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '@panta/core';
import { defaultReportDir, manifestPath } from '@panta/corpus';
import { drawCatalog } from './catalog.js';
import type { CorpusData } from './corpus-data.js';
import { reportHtml, type RenderedFigure } from './html.js';
import { loadCorpus } from './load-corpus.js';
import { renderPng, renderSvg } from './render.js';
import { tableCsv } from './table.js';
import { whiteningWarning } from './whitening-check.js';

export interface ReportOptions {
  /** Report folder (default: `<corpus>/report`). */
  out?: string;
  /** PNG pixels per SVG unit (default 2). */
  pngScale?: number;
  /**
   * Prompts left out of Table 9 and the main text's pooled analyses (Table 8's pooled rows, Figure 5, the
   * majority grid): the paper leaves out its Prompt 1, whose judge labels were inverted. Table 7's pooled
   * column and Table 10 pool every prompt, as the paper's do; per-prompt rows and curves keep them. Default:
   * the spec's `exclude_prompts` (none when it has none); an empty list leaves none out.
   */
  excludePrompts?: string[];
  /**
   * Corpora this one is compared with: when a (prompt, encoder) they share was whitened differently, their
   * m and q are not comparable, and the report says so in one line (a note starting `Warning:`).
   */
  compare?: string[];
  /** A post-hoc judge whose tags the report draws (see LoadOptions.judge). */
  judge?: string;
  /** The spread over trials of Figure 6's band and the truncation table: `sd` (the paper's, the default) or `se`. */
  spread?: 'sd' | 'se';
}

export interface ReportResult {
  /** The report folder. */
  out: string;
  /** Its index.html. */
  index: string;
  /** Status of the corpus reported on. */
  status: string;
  figures: { id: string; svg: string; png: string; spec: string }[];
  tables: { id: string; csv: string }[];
  notes: string[];
  data: CorpusData;
}

/**
 * `panta report DIR`: reads the corpus, renders every figure (Vega-Lite -> SVG by Vega, SVG -> PNG by resvg)
 * and table in memory, then writes `<out>/index.html` (self-contained), `figures/<id>.{svg,png,vl.json}` and
 * `tables/<id>.csv`. Bad input throws InputError before anything is written.
 */
export async function writeReport(dir: string, options: ReportOptions = {}): Promise<ReportResult> {
  const out = resolve(options.out ?? defaultReportDir(dir));
  if (existsSync(out) && !statSync(out).isDirectory())
    throw new InputError(out, '--out', 'exists and is not a folder', 'give a folder for the report, or remove the file');
  const warning = options.compare?.length ? whiteningWarning([dir, ...options.compare]) : null;
  const data = await loadCorpus(dir, { events: true, ...(options.judge !== undefined ? { judge: options.judge } : {}) });
  if (warning) data.notes.unshift(`Warning: ${warning}`);
  applyOptions(data, dir, options);
  const part = data.manifest.shard;
  if (part) {
    // A part's runs were whitened and measured by nothing yet: a report of it alone would fit the whitening
    // on its own runs' t = 0 answers, not the sweep's.
    throw new InputError(
      manifestPath(dir),
      'shard',
      `${dir} is part ${part.index} of ${part.count} of a job array, measured only once merged`,
      'run panta merge OUT with every part, then panta report OUT',
    );
  }
  const { figures, tables } = await drawCatalog(data, dir);
  const rendered: (RenderedFigure & { png: Buffer })[] = [];
  for (const figure of figures) {
    const svg = await renderSvg(figure.spec);
    rendered.push({
      figure,
      svg,
      png: renderPng(svg, { scale: options.pngScale }),
      files: { svg: `figures/${figure.id}.svg`, png: `figures/${figure.id}.png`, spec: `figures/${figure.id}.vl.json` },
    });
  }
  const html = reportHtml(data, rendered, tables, new Date());

  mkdirSync(join(out, 'figures'), { recursive: true });
  mkdirSync(join(out, 'tables'), { recursive: true });
  // A previous report's files (another encoder list, say) would otherwise linger next to the new ones.
  for (const [sub, pattern] of [
    ['figures', /\.(svg|png|vl\.json)$/],
    ['tables', /\.csv$/],
  ] as const) {
    for (const f of readdirSync(join(out, sub))) if (pattern.test(f)) rmSync(join(out, sub, f));
  }
  for (const r of rendered) {
    writeFileSync(join(out, r.files.svg), r.svg);
    writeFileSync(join(out, r.files.png), r.png);
    writeFileSync(join(out, r.files.spec), `${JSON.stringify(r.figure.spec, null, 1)}\n`);
  }
  for (const t of tables) writeFileSync(join(out, 'tables', `${t.id}.csv`), tableCsv(t));
  const index = join(out, 'index.html');
  writeFileSync(`${index}.tmp`, html);
  renameSync(`${index}.tmp`, index);
  return {
    out,
    index,
    status: data.manifest.status,
    figures: rendered.map((r) => ({
      id: r.figure.id,
      svg: join(out, r.files.svg),
      png: join(out, r.files.png),
      spec: join(out, r.files.spec),
    })),
    tables: tables.map((t) => ({ id: t.id, csv: join(out, 'tables', `${t.id}.csv`) })),
    notes: data.notes,
    data,
  };
}

/**
 * The report's options on the loaded corpus: the prompts left out (--exclude-prompts, else the spec's
 * exclude_prompts), the spread over trials, and the spec's departures as a note. Bad input throws InputError.
 */
function applyOptions(data: CorpusData, dir: string, options: ReportOptions): void {
  // --exclude-prompts overrides the spec's exclude_prompts (the paper's scope where the spec gives it).
  const fromSpec = (data.manifest.spec as { exclude_prompts?: unknown }).exclude_prompts;
  const fromOption = options.excludePrompts !== undefined;
  const exclude = [...new Set(fromOption ? options.excludePrompts! : Array.isArray(fromSpec) ? fromSpec.map(String) : [])];
  const [where, field, fix] = fromOption
    ? [dir, '--exclude-prompts', '']
    : [manifestPath(dir), 'spec.exclude_prompts', ' (or override it with --exclude-prompts)'];
  const prompts = [...new Set(data.runs.map((r) => r.prompt_id))].sort();
  for (const p of exclude)
    if (!prompts.includes(p))
      throw new InputError(where, field, `${JSON.stringify(p)} is no prompt of this corpus`, `use ids among ${prompts.join(', ')}${fix}`);
  if (exclude.length > 0 && exclude.length >= prompts.length)
    throw new InputError(where, field, 'excludes every prompt, leaving nothing to pool', `keep at least one prompt${fix}`);
  data.excludeSource = fromOption ? '--exclude-prompts' : 'exclude_prompts in the spec';
  data.excludePrompts = exclude;
  if (options.spread !== undefined && options.spread !== 'sd' && options.spread !== 'se')
    throw new InputError(dir, '--spread', `${JSON.stringify(options.spread)} is no spread`, "use sd (the paper's) or se");
  data.spread = options.spread ?? 'sd';
  const departures = (data.manifest.spec as { departures?: unknown }).departures;
  if (Array.isArray(departures) && departures.length > 0)
    data.notes.push(`Departures from the paper this sweep records (its spec's departures): ${departures.map(String).join('; ')}.`);
}
