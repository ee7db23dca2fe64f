import { existsSync, readdirSync, statSync } from 'node:fs';
import { eventsDir, manifestPath, orderParamsPath, readManifest } from '@panta/corpus';
import { loadCorpus } from './load-corpus.js';
import { orderingFigure, rhoFigure } from './figures.js';
import { layout } from './aggregate.js';
import { renderSvg } from './render.js';

/** The live order-parameter figures of one corpus folder. */
export interface CurvesView {
  dir: string;
  name: string;
  /** Changes whenever the figures do (the set of complete shards, the manifest's status). */
  signature: string;
  /** ms since the epoch when the figures were drawn. */
  drawnAt: number;
  encoder: string | null;
  runsMeasured: number;
  runsTotal: number;
  /** True while order parameters are recomputed here from the complete runs (the sweep is not finished). */
  provisional: boolean;
  notes: string[];
  figures: { id: string; title: string; svg: string }[];
  error: string | null;
}

/**
 * Draws magnetisation, cohesion (first encoder) and hallucination density against sweep t for a corpus,
 * with the report's own figures (`loadCorpus` recomputes order parameters from the complete shards of an
 * unfinished sweep), again only when the corpus changed: a run completed, or the sweep finished.
 */
export class CurveCache {
  private readonly views = new Map<string, CurvesView>();

  get(dir: string): CurvesView | undefined {
    return this.views.get(dir);
  }

  /** Redraws when the corpus changed since the last drawing; returns true when it did. */
  async refresh(dir: string): Promise<boolean> {
    const signature = corpusSignature(dir);
    const before = this.views.get(dir);
    if (before && before.signature === signature) return false;
    this.views.set(dir, await draw(dir, signature));
    return true;
  }
}

/** What the figures depend on: the manifest's status and the complete shards. */
export function corpusSignature(dir: string): string {
  const manifest = existsSync(manifestPath(dir)) ? readManifest(dir) : null;
  if (!manifest) return 'absent';
  const events = eventsDir(dir);
  const shards = existsSync(events) ? readdirSync(events).filter((f) => f.endsWith('.parquet') && !f.startsWith('.')) : [];
  const params = orderParamsPath(dir);
  const paramsAt = existsSync(params) ? statSync(params).mtimeMs : 0;
  return `${manifest.status}|${manifest.fingerprint}|${paramsAt}|${shards.length}|${shards.sort().join(',')}`;
}

async function draw(dir: string, signature: string): Promise<CurvesView> {
  const empty: CurvesView = {
    dir,
    name: dir,
    signature,
    drawnAt: Date.now(),
    encoder: null,
    runsMeasured: 0,
    runsTotal: 0,
    provisional: false,
    notes: [],
    figures: [],
    error: null,
  };
  if (signature === 'absent') return { ...empty, error: `${dir} holds no corpus (yet): no manifest.json` };
  try {
    const data = await loadCorpus(dir);
    const encoder = data.encoders[0];
    const measured = new Set(data.orderParams.map((p) => p.run_id)).size;
    const view = {
      ...empty,
      name: data.manifest.name,
      encoder,
      runsMeasured: measured,
      runsTotal: data.manifest.runs.planned,
      provisional: data.provisional,
      notes: data.notes,
    };
    if (data.orderParams.length === 0) return view;
    const lay = layout(data);
    const figures = [
      orderingFigure(data, 'magnetisation', encoder, lay),
      orderingFigure(data, 'cohesion', encoder, lay),
      rhoFigure(data, lay),
    ];
    const rendered = [];
    for (const f of figures) rendered.push({ id: f.id, title: f.title, svg: await renderSvg(f.spec) });
    return { ...view, figures: rendered };
  } catch (e) {
    return { ...empty, error: (e as Error).message.split('\n')[0] };
  }
}
