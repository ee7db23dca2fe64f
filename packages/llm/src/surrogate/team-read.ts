import { BELIEF_LINE, normaliseText, PERSONA_LINE, TEAM_SYSTEM, TEAM_TASK, type ChatMessages, type Prompt } from '@panta/core';

/**
 * A team call read back from its text (core/src/team/prompts.ts), the same way in process and in the
 * surrogate server, so that both answer the same. null: not a team call.
 */
export type TeamRole =
  | 'relay'
  | 'orchestrator'
  | 'aggregator'
  | 'worker'
  | 'persona-gen'
  | 'persona'
  | 'vote'
  | 'drift-judge'
  | 'feedback'
  | 'solution'
  | 'observer'
  | 'extractor'
  | 'debater';

export interface TeamView {
  role: TeamRole;
  /** The member (0-based) and the team's size. */
  member: number;
  size: number;
  turn: number;
  rounds: number;
  prompt: Prompt;
  /** The user message after the task, line by line. */
  lines: string[];
  belief?: string;
  persona?: string;
  /** Every system line after the first: the member's persona and hidden beliefs as the population gave them. */
  hidden?: string;
}

const RELAY = /^You are agent (\d+) of a relay of (\d+) agents/;
const HUB = /^You are the orchestrator of a hub of (\d+) workers\./;
const WORKER = /^You are worker (\d+) of a hub of (\d+) workers\./;
const PARTICIPANT = /^You are participant (\d+) of (\d+) in a discussion of a task, turn (\d+) of (\d+)\./;
const MODERATOR = /^You are the moderator of a discussion between (\d+) experts\./;
const DEBATER =
  /^You argue in a debate called by (?:agent|worker) (\d+): you are (?:agent|worker) (\d+) of a (?:relay of (\d+) agents|hub of (\d+) workers)\./;
const OBSERVER = /^You are the (observer|extractor) of a (?:relay of (\d+) agents|hub of (\d+) workers and their orchestrator)\./;

export function readTeamCall(messages: ChatMessages, prompts: readonly Prompt[]): TeamView | null {
  const [first, ...hidden] = messages.system.split('\n');
  const found = roleOf(first, messages.user);
  if (!found) return null;
  const prompt = prompts.find((p) => messages.user.startsWith(`${TEAM_TASK}${p.question}\n`));
  if (!prompt) throw new Error(`surrogate: a team call about a task it does not know (${JSON.stringify(messages.user.slice(0, 60))})`);
  const lines = messages.user.slice(TEAM_TASK.length + prompt.question.length + 1).split('\n');
  const view: TeamView = { ...found, prompt, lines };
  if (hidden.length > 0) view.hidden = hidden.join(' ');
  for (const h of hidden) {
    if (h.startsWith(BELIEF_LINE)) view.belief = h.slice(BELIEF_LINE.length);
    else if (h.startsWith(PERSONA_LINE)) view.persona = h.slice(PERSONA_LINE.length);
  }
  return view;
}

function roleOf(first: string, user: string): Pick<TeamView, 'role' | 'member' | 'size' | 'turn' | 'rounds'> | null {
  let m = RELAY.exec(first);
  if (m) return { role: 'relay', member: Number(m[1]) - 1, size: Number(m[2]), turn: Number(m[1]) - 1, rounds: 0 };
  m = HUB.exec(first);
  if (m)
    return {
      role: user.includes('\nYour plan: ') ? 'aggregator' : 'orchestrator',
      member: Number(m[1]),
      size: Number(m[1]),
      turn: 0,
      rounds: 0,
    };
  m = WORKER.exec(first);
  if (m) return { role: 'worker', member: Number(m[1]) - 1, size: Number(m[2]), turn: 1, rounds: 0 };
  m = PARTICIPANT.exec(first);
  if (m) {
    const role = user.includes('\nProposed solutions:\n') ? 'vote' : 'persona';
    return { role, member: Number(m[1]) - 1, size: Number(m[2]), turn: Number(m[3]), rounds: Number(m[4]) };
  }
  if (first === TEAM_SYSTEM.personaGen()) return { role: 'persona-gen', member: -1, size: 0, turn: 0, rounds: 0 };
  if (first === TEAM_SYSTEM.judge()) return { role: 'drift-judge', member: -1, size: 0, turn: 0, rounds: 0 };
  if (first === TEAM_SYSTEM.extractor()) return { role: 'solution', member: -1, size: 0, turn: 0, rounds: 0 };
  m = MODERATOR.exec(first);
  if (m) return { role: 'feedback', member: -1, size: Number(m[1]), turn: 0, rounds: 0 };
  m = DEBATER.exec(first);
  if (m) return { role: 'debater', member: Number(m[2]) - 1, size: Number(m[3] ?? m[4]), turn: Number(m[1]) - 1, rounds: 0 };
  m = OBSERVER.exec(first);
  if (m) return { role: m[1] === 'observer' ? 'observer' : 'extractor', member: -1, size: Number(m[2] ?? m[3]), turn: 0, rounds: 0 };
  return null;
}

/** The text after `prefix` on the first line that starts with it, or undefined. */
export function lineAfter(lines: readonly string[], prefix: string | RegExp): string | undefined {
  for (const l of lines) {
    if (typeof prefix === 'string') {
      if (l.startsWith(prefix)) return l.slice(prefix.length);
    } else {
      const m = prefix.exec(l);
      if (m) return l.slice(m[0].length);
    }
  }
  return undefined;
}

/** Whether `phrase` occurs in `text` as whole words (the reference judge's matching). */
export function mentions(text: string, phrase: string): boolean {
  return ` ${normaliseText(text)} `.includes(` ${normaliseText(phrase)} `);
}
