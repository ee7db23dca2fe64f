import { board } from './board/index.js';
import { registerStudy, type Study } from './study.js';
import { teams } from './teams/index.js';
import { travel } from './travel/index.js';

export { registerStudy, type Study, type StudyScenario } from './study.js';

/** Every study, each registered into the library's registries when this module is loaded. */
export const STUDIES: readonly Study[] = [travel, teams, board];

for (const study of STUDIES) registerStudy(study);
