/**
 * A relay's pooled token budget (spec `team.budget_rule: pool`; docs/teams.md): the chain shares one budget of
 * completion tokens, and member k may write what the members before it left of it, divided over the members
 * still to write (k included): the last member has all that is left. Members that write less than their share
 * pass the rest on, and however they spend it the chain never writes more than the budget (each share is at
 * most what is left over the members still to come, so every later member keeps at least one token while the
 * budget is at least N). A member's share depends on what the earlier members spent: a pooled relay member
 * reads every earlier call (`spent`), and a pooled relay version carries the completion tokens of its call.
 */

/** Member k's (0-based) share of a pooled budget of `budget` tokens over `n` members, when the members before it spent `spent`. */
export function poolShare(budget: number, n: number, k: number, spent: number): number {
  return Math.max(1, Math.floor((budget - spent) / (n - k)));
}

/** A pooled relay call's version: the completion tokens it spent, a newline, the text its readers read. */
export function encodeSpentVersion(text: string, completionTokens: number): string {
  return `${completionTokens}\n${text}`;
}

/** A pooled relay version read back: its text and the completion tokens its call spent. */
export function decodeSpentVersion(version: string): { text: string; completionTokens: number } {
  const cut = version.indexOf('\n');
  const tokens = cut < 0 ? Number.NaN : Number(version.slice(0, cut));
  if (!Number.isInteger(tokens) || tokens < 0)
    throw new Error(`a pooled relay version without its spent tokens: ${JSON.stringify(version.slice(0, 40))}`);
  return { text: version.slice(cut + 1), completionTokens: tokens };
}
