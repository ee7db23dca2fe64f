import type { ProtocolDef } from '@panta/core';
import type { Study } from '../study.js';

/** A population protocol's shape: every update reads its neighbours. */
const POPULATION = { reads: 'neighbours', version: 'answer', population: true, teams: [], calls: [] } as const;

/** A relay and hub arm's shape: no population runs, the team schedule's read sets. */
const RELAY_HUB_ARM = { reads: 'neighbours', version: 'answer', population: false, teams: ['relay', 'hub'], calls: [] } as const;

/**
 * The belief board study's protocols (docs/teams.md, "Belief board arms"; docs/DESIGN.md): on populations,
 * `belief-board`, whose agents read their neighbours' live board entries and reply with their own (the
 * library's `board` version: core/src/protocol/board.ts); on relay and hub teams, the arms the study compares
 * with the plain team: a shared board shown at each turn (`board`), written but never shown (`board_inert`),
 * every earlier call's whole output (`full`), a structured hand-off (`sop`), the observer's belief table
 * (`table`), the observer-style extractor (`extract`) and debate on demand (`down`), each one of the library's team arm behaviours
 * (ProtocolDef.arm). Their names, in this order, follow the built-in ones in the schema.
 */
export const BOARD_PROTOCOLS = {
  'belief-board': { ...POPULATION, about: 'agents read and write live board entries instead of answers', version: 'board' },
  board: { ...RELAY_HUB_ARM, about: 'members write board entries and read the board at the start of their turn', arm: { board: 'shown' } },
  board_inert: { ...RELAY_HUB_ARM, about: 'members write board entries; the board is never shown', arm: { board: 'inert' } },
  full: { ...RELAY_HUB_ARM, about: "every earlier call's full output is shown", arm: { earlier: 'output' } },
  sop: { ...RELAY_HUB_ARM, about: 'hand-offs in a verdict / evidence / next-steps form', arm: { handoff: 'sop' } },
  table: {
    ...RELAY_HUB_ARM,
    about: "an observer reads each hand-off's whole reply and keeps the belief table, typed entries shown at the start of every turn",
    arm: { observer: 'table' },
  },
  extract: {
    ...RELAY_HUB_ARM,
    about: "an extractor reads each hand-off's whole reply and writes what later members need, shown beside the hand-off",
    arm: { observer: 'extract' },
  },
  down: {
    ...RELAY_HUB_ARM,
    about:
      'debate on demand: a member may call a debate with a DEBATE line; the other members argue it in turn, and the reader of its reply is shown the debate',
    arm: { demand: 'debate' },
  },
} as const satisfies Record<string, ProtocolDef>;

/**
 * The belief board study: agents that share claims on a board instead of (or beside) their answers. Its
 * relay and hub runs are played by the teams study's `team-facts` scenario (its board arms included);
 * their metrics are teams.parquet's.
 */
export const board: Study = { name: 'board', protocols: BOARD_PROTOCOLS };
