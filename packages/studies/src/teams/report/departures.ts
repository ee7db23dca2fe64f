/**
 * The departures from the papers (docs/departures.md: Boards, Drift) that a team corpus used, in words, for the
 * team tables' captions: read from the stored spec's `team` block (an absent key read as corpora from before it
 * were run) and the arms its rows hold, then the spec's own `departures` (where the examples state what no key
 * shows: the token budget's split, the datasets).
 */
export function teamDepartures(rows: readonly { dynamics: string; arm: string }[], spec: unknown): string[] {
  const s = (spec ?? {}) as {
    departures?: unknown;
    team?: { memory?: string; solution?: string; decision?: string; revisions?: string };
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
  if (dynamics.has('relay') || dynamics.has('hub')) {
    if ((arms.has('board') || arms.has('board_inert')) && team.revisions !== 'author')
      out.push("a board line revises the object's latest entry whoever wrote it (team.revisions: object), not its author's own");
  }
  if (Array.isArray(s.departures)) for (const d of s.departures) if (typeof d === 'string') out.push(d);
  return out;
}
