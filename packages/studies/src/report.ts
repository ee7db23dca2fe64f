import { type CatalogSection, registerSection } from '@panta/report';
import { teamsSection } from './teams/report/index.js';
import { travelSection } from './travel/report.js';

/**
 * Every study's sections of the report catalog, registered after the built-in ones when this module is
 * loaded: by `panta report` before it draws, and by vitest's setup file. Apart from the studies' other parts
 * (index.ts) because @panta/report loads the chart renderer, which no other command needs at startup.
 */
export const STUDY_SECTIONS: readonly CatalogSection[] = [teamsSection, travelSection];

for (const s of STUDY_SECTIONS) registerSection(s);
