import { layout, type Layout } from './aggregate.js';
import { annotationTable } from './annotation-table.js';
import type { CorpusData } from './corpus-data.js';
import { earlyStoppingTable } from './early-stopping.js';
import { fateFigure, fateTable } from './fate.js';
import type { Figure } from './figure.js';
import { cdsFigure, deltaRhoFigure, orderingFigure, phaseSpaceFigure, rhoFigure } from './figures.js';
import { amplificationFigure, hallucinationShareTable, sweepHallucinationFigure } from './hallucination.js';
import { cohesionAccuracyTable, truncationTable } from './insight4.js';
import { binderFigure, fluctuationsTable, loadPhase, phaseDiagramFigure, phaseEstimatesTable } from './phase.js';
import { protocolsFigure, protocolsTable } from './protocols.js';
import { isTeamRun, relayFigure, relayTable } from './relay.js';
import { section, type CatalogSection } from './section.js';
import { armMeansTable, armTestsTable } from './stats-table.js';
import type { Table } from './table.js';
import { costTable, driftTable, ladderTable, robustnessTable } from './tables.js';

/**
 * The report's catalog: every figure and table `panta report` writes, in reading order, one entry each. Adding
 * a figure is its function (a Figure from the section's source) and one line here. Sections in order: the
 * population sweep, then each study's own section (added with registerSection, after it in the order
 * registered: packages/studies/src/report.ts).
 */

/** What the population sweep's entries read: the corpus and its panel layout. */
interface Sweep {
  data: CorpusData;
  lay: Layout;
}

const perEncoder = <T>(data: CorpusData, make: (encoder: string) => T): T[] => data.encoders.map(make);

/**
 * The population sweep: figures once there are order parameters; tables always (empty ones say why). A sweep of
 * team runs only has no population: the section adds nothing, and the team sections are the report.
 */
const population = section<Sweep>({
  name: 'population',
  load: async (data) => (data.runs.length > 0 && data.runs.every(isTeamRun) ? null : { data, lay: layout(data) }),
  drawable: ({ data }) => data.orderParams.length > 0,
  figures: [
    {
      ids: ['magnetisation-{encoder}', 'cohesion-{encoder}'],
      make: ({ data, lay }) =>
        perEncoder(data, (e) => [orderingFigure(data, 'magnetisation', e, lay), orderingFigure(data, 'cohesion', e, lay)]).flat(),
    },
    { ids: ['rho'], make: ({ data, lay }) => rhoFigure(data, lay) },
    { ids: ['delta-rho'], make: ({ data, lay }) => deltaRhoFigure(data, lay) },
    { ids: ['phase-space-{encoder}'], make: ({ data, lay }) => perEncoder(data, (e) => phaseSpaceFigure(data, e, lay)) },
    { ids: ['cds-{encoder}'], make: ({ data, lay }) => perEncoder(data, (e) => cdsFigure(data, e, lay)) },
    { ids: ['amplification'], make: ({ data }) => amplificationFigure(data) },
    { ids: ['hallucination-by-sweep'], make: ({ data }) => sweepHallucinationFigure(data) },
    { ids: ['majority-fate-grid'], make: ({ data }) => fateFigure(data) },
    { ids: ['protocols-rho'], make: ({ data, lay }) => protocolsFigure(data, lay) },
    { ids: ['lost-in-propagation'], make: ({ data }) => relayFigure(data) },
  ],
  tables: [
    { ids: ['hallucination-share'], make: ({ data }) => hallucinationShareTable(data) },
    { ids: ['majority-fate'], make: ({ data }) => fateTable(data) },
    { ids: ['human-validation'], make: ({ data }) => annotationTable(data) },
    { ids: ['geometry-ladder'], make: ({ data, lay }) => ladderTable(data, lay) },
    { ids: ['encoder-robustness'], make: ({ data }) => robustnessTable(data) },
    { ids: ['drift'], make: ({ data, lay }) => driftTable(data, lay) },
    { ids: ['cost'], make: ({ data, lay }) => costTable(data, lay) },
    {
      ids: ['early-stopping'],
      make: ({ data, lay }) => (data.runs.some((r) => r.stopped_early === true) ? earlyStoppingTable(data, lay) : null),
    },
    { ids: ['truncation'], make: ({ data, lay }) => truncationTable(data, lay) },
    { ids: ['cohesion-accuracy'], make: ({ data, lay }) => cohesionAccuracyTable(data, lay) },
    { ids: ['protocols'], make: ({ data, lay }) => protocolsTable(data, lay) },
    { ids: ['lost-in-propagation-accuracy'], make: ({ data }) => relayTable(data) },
    { ids: ['arm-means'], make: ({ data }) => armMeansTable(data) },
    { ids: ['arm-tests'], make: ({ data }) => armTestsTable(data) },
  ],
});

/** Fluctuation measures and transition temperatures (phase.parquet): corpora written before it have no such section. */
const phase = section({
  name: 'phase',
  load: (data) => loadPhase(data),
  figures: [
    {
      ids: ['binder-{encoder}'],
      make: (p) =>
        p.diagram
          .map((f) => f.encoder)
          .filter((e, i, all) => all.indexOf(e) === i)
          .map((e) => binderFigure(p, e))
          .filter((f) => f !== null),
    },
    { ids: ['phase-diagram'], make: (p) => phaseDiagramFigure(p) },
  ],
  tables: [
    { ids: ['phase-estimates'], make: (p) => phaseEstimatesTable(p) },
    { ids: ['fluctuations'], make: (p) => fluctuationsTable(p) },
  ],
});

const BUILT_IN: readonly CatalogSection[] = [population, phase];

const ADDED: CatalogSection[] = [];

/** Adds a study's section after the built-in ones; a section name already taken is refused. */
export function registerSection(s: CatalogSection): void {
  if (catalog().some((c) => c.name === s.name)) throw new Error(`report section "${s.name}" is already registered`);
  ADDED.push(s);
}

/** The catalog's sections in reading order: the built-in ones, then those studies added. */
export function catalog(): readonly CatalogSection[] {
  return [...BUILT_IN, ...ADDED];
}

/** Every figure and table of the catalog for one corpus, in reading order (`dir`: the corpus folder as given). */
export async function drawCatalog(data: CorpusData, dir: string, sections = catalog()): Promise<{ figures: Figure[]; tables: Table[] }> {
  const figures: Figure[] = [];
  const tables: Table[] = [];
  for (const s of sections) {
    const drawn = await s.draw(data, dir);
    figures.push(...drawn.figures);
    tables.push(...drawn.tables);
  }
  return { figures, tables };
}
