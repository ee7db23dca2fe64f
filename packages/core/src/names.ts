/**
 * Names shared across core that import nothing (so no module has to import a heavier one, and no import
 * circle forms, only to read a constant).
 */

/** Characters per token of every estimate (plan costs, context bounds, board caps): about four for English text. */
export const CHARS_PER_TOKEN = 4;
