import type { Study } from '../study.js';
import { travel as scenario } from './surrogate/index.js';

/**
 * The travel experiment: a briefed travel-planning team run under ssvp and its arms (docs/travel.md). Its
 * surrogate scenario plays a team whose task names the destination and whose roles' briefings may mislead.
 */
export const travel: Study = { name: 'travel', scenario };
