import { Resvg } from '@resvg/resvg-js';
import { Error as ErrorLevel, View, logger, parse, type Spec } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** A Vega-Lite spec compiled to a Vega spec. */
export function toVega(spec: TopLevelSpec): Spec {
  // Vega-Lite reports spec conflicts on the console as warnings; a report has no console to spare for them.
  return compile(spec, { logger: logger(ErrorLevel) }).spec as Spec;
}

/**
 * A headless Vega view of a Vega-Lite spec, run to completion (renderer `none`: no canvas, no DOM). The caller
 * calls `finalize()`; tests read its data sets and scenegraph.
 */
export async function vegaView(spec: TopLevelSpec): Promise<View> {
  const view = new View(parse(toVega(spec)), { renderer: 'none', logLevel: ErrorLevel });
  await view.runAsync();
  return view;
}

/** Renders a Vega-Lite spec to SVG text in Node (text widths are estimated, there is no canvas to measure). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = await vegaView(spec);
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export interface PngOptions {
  /** Pixels per SVG unit (default 2: sharp on high-density screens and in print). */
  scale?: number;
}

/**
 * Rasterises SVG to PNG with resvg. Text needs fonts: the system's are loaded (DejaVu Sans on Debian), sans-serif
 * mapped to DejaVu Sans. Throws if the SVG does not parse.
 */
export function renderPng(svg: string, options: PngOptions = {}): Buffer {
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: options.scale ?? 2 },
    background: 'white',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}
