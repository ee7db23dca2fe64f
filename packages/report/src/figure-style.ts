import type { Layout } from './aggregate.js';

export const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

/** Panel size and fonts shared by every figure; DejaVu Sans is what the PNG renderer loads. */
export const PANEL = { width: 180, height: 120 };
export const CONFIG = {
  font: 'DejaVu Sans, Verdana, sans-serif',
  background: 'white',
  view: { stroke: '#ccc' },
  axis: { labelFontSize: 10, titleFontSize: 11, gridColor: '#eee' },
  header: { labelFontSize: 11, labelFontWeight: 'bold' as const },
  legend: { labelFontSize: 10, titleFontSize: 11 },
  title: { fontSize: 14, anchor: 'start' as const },
};

/** Temperature colours: an ordinal cut of plasma without its palest end, so every line shows on white. */
export function temperatureColor(lay: Layout) {
  return {
    field: 'temperature',
    type: 'ordinal' as const,
    title: 'T',
    scale: { domain: lay.temperatures, scheme: { name: 'plasma', extent: [0.05, 0.8] } },
  };
}

/** Legend entries drawn as line strokes, fully opaque (the translucent bands would otherwise set their look); the same on every layer, as Vega-Lite merges them. */
export const LINE_LEGEND = { symbolType: 'stroke', symbolStrokeWidth: 2.5, symbolOpacity: 1, symbolSize: 200 };
