export { loadCorpus, readCorpusManifest, type CorpusData, type RunInfo } from './corpus-data.js';
export { curves, finalDeltaRho, finalRows, layout, panelLabel, type CurvePoint, type DeltaRhoPoint, type Layout } from './aggregate.js';
export { deltaRhoFigure, orderingFigure, phaseSpaceFigure, reportFigures, rhoFigure, type Figure } from './figures.js';
export { configCohesion, costTable, driftTable, ladderTable, reportTables, robustnessTable, tableCsv, type Cell, type Table } from './tables.js';
export { renderPng, renderSvg, toVega, vegaView, type PngOptions } from './render.js';
export { reportHtml, formatCell, inlineSvg, type RenderedFigure } from './html.js';
export { writeReport, type ReportOptions, type ReportResult } from './write-report.js';
export { averageRanks, extent, mean, pearson, spearman } from './stats.js';
