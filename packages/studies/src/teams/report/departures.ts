/**
 * The departures from the papers (docs/departures.md: Boards, Drift) that a team corpus used, in words, for the
 * team tables' captions: read from the stored spec's `team` block (an absent key read as corpora from before it
 * were run) and the arms its rows hold, then the spec's own `departures` (where the examples state what no key
 * shows: the token budget's split, the datasets).
 */
export function teamDepartures(rows: readonly { dynamics: string; arm: string }[], spec: unknown): string[] {
  const s = (spec ?? {}) as {
    departures?: unknown;
    team?: { memory?: string; solution?: string; decision?: string; revisions?: string; token_budget?: number; budget_rule?: string };
  };
  const team = s.team ?? {};
  const dynamics = new Set(rows.map((r) => r.dynamics));
  const arms = new Set(rows.map((r) => r.arm));
  const out: string[] = [];
  if (dynamics.has('debate')) {
    if ((team.memory ?? 'all') !== 'recent')
      out.push('a contribution reads every earlier turn (team.memory: all), not only the current and previous turns');
    if (team.solution !== 'extracted')
      out.push("a turn's solution is the winning contribution verbatim (team.solution: verbatim), not extracted by a call");
    if (team.decision === 'consensus') out.push('consensus runs every turn (team.decision: consensus), never ending once the agents agree');
    if (arms.has('drift-policy-gold'))
      out.push(
        "arm drift-policy-gold gates on a one-turn drop of gold fact recall (a negative FOCUS), not on the paper's drift over turns",
      );
  }
  const stated = Array.isArray(s.departures) ? s.departures.filter((d): d is string => typeof d === 'string') : [];
  // A relay budget split in advance (budget_rule split, or a spec from before the key), unless the spec says so itself.
  if (
    dynamics.has('relay') &&
    team.token_budget !== undefined &&
    team.budget_rule !== 'pool' &&
    !stated.some((d) => /split in advance/.test(d))
  )
    out.push(
      `the relay's token budget split in advance (each member at most floor(${team.token_budget} / N) completion tokens, team.budget_rule: split), not pooled over the chain`,
    );
  if (dynamics.has('relay') || dynamics.has('hub')) {
    if ((arms.has('board') || arms.has('board_inert')) && team.revisions !== 'author')
      out.push("a board line revises the object's latest entry whoever wrote it (team.revisions: object), not its author's own");
    // The observer arms: a member's trace is its one reply, and the prompts are Panta's (the paper gives none),
    // named once, even where the spec's own departures state it too.
    if ((arms.has('table') || arms.has('extract')) && !stated.some((d) => /no separate trace/.test(d)))
      out.push(
        "the observer (table) and the extractor (extract) read each hand-off's one reply, a member having no separate trace, with prompts in Panta's wording",
      );
    // down: the paper names the baseline only; who calls, who argues, what is shown and the prompts are Panta's.
    if (arms.has('down') && !stated.some((d) => /debate on demand/.test(d)))
      out.push(
        "down (debate on demand) is Panta's reading of a baseline the paper only names: relay members but the last and hub workers may call one debate each, every other member argues it once, the caller's reader is shown it",
      );
  }
  if (Array.isArray(s.departures)) for (const d of s.departures) if (typeof d === 'string') out.push(d);
  return out;
}
