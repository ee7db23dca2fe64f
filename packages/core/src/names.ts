/**
 * Names shared across core that import nothing (so no module has to import a heavier one, and no import
 * circle forms, only to read a constant).
 */

/** Characters per token of every estimate (plan costs, context bounds, board caps): about four for English text. */
export const CHARS_PER_TOKEN = 4;

/**
 * The team arms of the relay and hub schedules (docs/teams.md): `board` (members write board entries and
 * read the board at the start of their turn), `board_inert` (the tool is offered and entries are written,
 * but the board is never shown), `full` (every earlier call's full output shown), `sop` (hand-offs in a
 * verdict / evidence / next-steps form). `glauber` is the plain team.
 */
export const TEAM_PAPER_ARMS = ['board', 'board_inert', 'full', 'sop'] as const;

/** The team schedules (docs/teams.md): DAGs of calls whose read sets are fixed before anything runs. */
export const TEAM_DYNAMICS = ['relay', 'hub', 'debate'] as const;
