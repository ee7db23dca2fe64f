/**
 * Debate on demand (arm `down`, paper 001's baseline "down (debate on demand)"; docs/teams.md): a member whose
 * reply someone reads may call a debate with a line `DEBATE: <question>`. The line is the call's motion; the
 * debate's calls are planned and made only when the reply holds one (so read sets never depend on a reply).
 */
export const DEBATE_LINE_PREFIX = 'DEBATE:';

/**
 * A reply's motion: the question of its first line starting with `DEBATE:` (any case) whose question is not
 * empty, or null (no debate called); `rest` is the reply without any `DEBATE:` line (what is passed on as the
 * note or report).
 */
export function debateMotion(reply: string): { question: string | null; rest: string } {
  let question: string | null = null;
  const rest: string[] = [];
  for (const raw of reply.split('\n')) {
    const trimmed = raw.trim();
    if (trimmed.slice(0, DEBATE_LINE_PREFIX.length).toUpperCase() !== DEBATE_LINE_PREFIX) {
      rest.push(raw);
      continue;
    }
    const q = trimmed.slice(DEBATE_LINE_PREFIX.length).replace(/\s+/g, ' ').trim();
    if (question === null && q !== '') question = q;
  }
  return { question, rest: rest.join('\n').trim() };
}

/** Whether a reply calls a debate (the debate's calls are made, not skipped). */
export function callsDebate(reply: string): boolean {
  return debateMotion(reply).question !== null;
}
