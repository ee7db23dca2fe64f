import type { CorpusData } from './corpus-data.js';
import type { Figure } from './figure.js';
import type { Cell, Table } from './table.js';

/** A figure as rendered: its SVG text and where its files are, relative to index.html. */
export interface RenderedFigure {
  figure: Figure;
  svg: string;
  files: { svg: string; png: string; spec: string };
}

export function escapeHtml(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** Numbers as a reader wants them: counts with separators, measurements to 3 decimals; null as n/a. */
export function formatCell(c: Cell): string {
  if (c === null || (typeof c === 'number' && Number.isNaN(c))) return 'n/a';
  if (typeof c === 'boolean') return c ? 'yes' : 'no';
  if (typeof c === 'number') return Number.isInteger(c) ? c.toLocaleString('en-US') : c.toFixed(3);
  return c;
}

/**
 * SVG for inlining in HTML: the XML prolog and namespace declarations go (HTML parsing puts inline <svg> in the
 * SVG namespace by itself), so the page holds no URL at all.
 */
export function inlineSvg(svg: string): string {
  return svg
    .replace(/^<\?xml[^>]*>\s*/, '')
    .replace(/\s+xmlns(:\w+)?="[^"]*"/g, '')
    .replace(/^<svg\b/, '<svg role="img"');
}

const CSS = `
body { font-family: "DejaVu Sans", Verdana, sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.25rem; margin-top: 2.5rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
h3 { font-size: 1.05rem; margin-top: 1.8rem; }
.note { background: #fff4e0; border: 1px solid #e0a040; border-radius: 4px; padding: .6rem .9rem; margin: 1rem 0; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; font-size: .92rem; }
dl.summary dt { font-weight: bold; }
dl.summary dd { margin: 0; }
figure { margin: 1rem 0 2rem; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: .9rem; color: #444; max-width: 60rem; }
figcaption .files { font-size: .85rem; color: #666; }
table { border-collapse: collapse; font-size: .88rem; margin: .5rem 0; }
th, td { border: 1px solid #ddd; padding: .25rem .6rem; }
th { background: #f4f4f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
p.caption { font-size: .9rem; color: #444; max-width: 60rem; }
nav ul { columns: 2; font-size: .92rem; }
`;

function tableHtml(t: Table): string {
  const caption = `<p class="caption">${escapeHtml(t.caption)} <span class="files">(<a href="tables/${escapeHtml(t.id)}.csv">CSV</a>)</span></p>`;
  if (t.rows.length === 0)
    return `<section id="${escapeHtml(t.id)}"><h3>${escapeHtml(t.title)}</h3><p class="note">${escapeHtml(t.empty ?? 'No rows.')}</p>${caption}</section>`;
  const head = `<tr>${t.columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('')}</tr>`;
  const body = t.rows
    .map(
      (r) =>
        `<tr>${r.map((c) => `<td${typeof c === 'number' || c === null ? ' class="num"' : ''}>${escapeHtml(formatCell(c))}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<section id="${escapeHtml(t.id)}"><h3>${escapeHtml(t.title)}</h3>\n<table>\n<thead>${head}</thead>\n<tbody>\n${body}\n</tbody>\n</table>\n${caption}</section>`;
}

function figureHtml(f: RenderedFigure): string {
  const files = `<span class="files">Files: <a href="${f.files.svg}">SVG</a>, <a href="${f.files.png}">PNG</a>, <a href="${f.files.spec}">Vega-Lite spec</a>.</span>`;
  return `<section id="${escapeHtml(f.figure.id)}"><h3>${escapeHtml(f.figure.title)}</h3>\n<figure>\n${inlineSvg(f.svg)}\n<figcaption>${escapeHtml(f.figure.caption)} ${files}</figcaption>\n</figure></section>`;
}

/** index.html: one self-contained page (inline CSS and SVG, no script, nothing fetched when viewed). */
export function reportHtml(data: CorpusData, figures: readonly RenderedFigure[], tables: readonly Table[], generatedAt: Date): string {
  const m = data.manifest;
  const done = data.runs.filter((r) => r.status === 'complete').length;
  const summary: [string, string][] = [
    ['corpus', data.dir],
    ['status', m.status],
    ['runs', `${done} of ${m.runs.planned} complete${m.runs.failed.length > 0 ? `, ${m.runs.failed.length} failed` : ''}`],
    // A sweep still running counts written events only when it finishes: count the complete runs' rows then.
    [
      'events',
      `${(m.status === 'running' ? data.runs.reduce((s, r) => s + (r.status === 'complete' ? r.events : 0), 0) : m.events.written).toLocaleString('en-US')} of ${m.events.planned.toLocaleString('en-US')}${m.status === 'running' ? ' (in complete runs)' : ''}`,
    ],
    ['prompts', [...new Set(data.runs.map((r) => r.prompt_id))].join(', ')],
    ['temperatures', [...new Set(data.runs.map((r) => r.temperature))].sort((a, b) => a - b).join(', ')],
    ['backend', `${m.backend.kind} (${m.backend.model})`],
    ['judge', `${m.judge.kind} (${m.judge.model})`],
    ['encoders', m.encoders.map((e) => `${e.name} (${e.kind}, d = ${e.dim})`).join(', ')],
    ['seed', String(m.seed)],
    ['code', `panta ${m.code.panta || '?'}, node ${m.code.node}`],
    ['written', `${m.started_at} to ${m.updated_at}`],
    ['report made', generatedAt.toISOString()],
  ];
  const notes = data.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('\n');
  const nav = [...figures.map((f) => [f.figure.id, f.figure.title]), ...tables.map((t) => [t.id, t.title])]
    .map(([id, title]) => `<li><a href="#${escapeHtml(id!)}">${escapeHtml(title!)}</a></li>`)
    .join('');
  const figureSection =
    figures.length > 0 ? figures.map(figureHtml).join('\n') : '<p class="note">No figures: no run of this corpus is complete yet.</p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Panta report: ${escapeHtml(m.name)}</title>
<style>${CSS}</style>
</head>
<body>
<h1>Panta report: ${escapeHtml(m.name)}</h1>
${notes}
<dl class="summary">${summary.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>
<nav><ul>${nav}</ul></nav>
<h2>Figures</h2>
${figureSection}
<h2>Tables</h2>
${tables.map(tableHtml).join('\n')}
</body>
</html>
`;
}
