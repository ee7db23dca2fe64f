import { classifyAnswer, DRIFT_ERROR_TYPES, rngFrom, type Prompt, type Rng } from '@panta/core';
import { lineAfter, type TeamView } from '@panta/llm';

/**
 * Debate participants, voters, DRIFTJudge and moderator of the surrogate (paper 003). A participant keeps
 * the current draft's option or, with a chance that grows with the turn (long discussions wander), moves
 * off it; one who follows a participant that moved earlier in the same turn makes a drift spread, and a
 * draft that moved stays moved unless a later move or a moderator brings it back. The judge sees only two
 * consecutive solutions (no gold): it flags most changes and a few non-changes. The moderator names an
 * error type and the earlier solution, which the next turn mostly returns to.
 */
const FIRST_RIGHT = 0.6;
const WANDER_BASE = 0.02;
const WANDER_PER_TURN = 0.025;
const FOLLOW = 0.4;
const RECOVER = 0.4;
const HEED = 0.5;
const FLAG_CHANGE = 0.75;
const FLAG_STABLE = 0.06;
const LACK_OF_PROGRESS = 0.35;

const EXPERTS = [
  'a subject-matter expert who knows the field',
  'a careful logician who checks every step',
  'a critical reviewer who looks for mistakes',
  'a teacher who explains the reasoning plainly',
  'a fact checker who trusts only sources',
  'a generalist who weighs every option',
];

/** The task's options: the right answer first, then its known false answers (or "not known" when it has none). */
function options(prompt: Prompt): string[] {
  // An IFEval prompt has no accepted phrase: its options are placeholders (a surrogate does not write to instructions).
  const right = prompt.facts && prompt.facts.length > 1 ? prompt.facts.join('; ') : (prompt.accepted[0] ?? 'the answer as instructed');
  return [right, ...(prompt.false_answers.length > 0 ? prompt.false_answers : ['not known'])];
}

/** The option a text proposes: 0 right, 1.. a false answer, -1 none. */
function optionOf(prompt: Prompt, text: string): number {
  if (prompt.facts && prompt.facts.length > 1) return text.includes(options(prompt)[0]) ? 0 : 1;
  const c = classifyAnswer(prompt, text);
  if (c.kind === 'correct') return 0;
  if (c.kind === 'false') return 1 + c.index;
  return prompt.false_answers.length > 0 ? -1 : 1;
}

function other(count: number, not: number, rng: Rng): number {
  if (count <= 1) return not;
  const k = rng.int(count - 1);
  return k >= not ? k + 1 : k;
}

export function generatePersonas(size: number): string {
  return Array.from({ length: size }, (_, i) => `${i + 1}. ${EXPERTS[i % EXPERTS.length]}`).join('\n');
}

export function contribute(view: TeamView, seed: number): string {
  const { prompt, lines, turn } = view;
  const rng = rngFrom(seed, 'surrogate-debate');
  const opts = options(prompt);
  const draft = lineAfter(lines, /^Current draft \(solution of turn \d+\): /);
  let pick: number;
  if (draft === undefined) pick = rng.next() < FIRST_RIGHT ? 0 : 1 + rng.int(opts.length - 1);
  else {
    const d = optionOf(prompt, draft);
    const feedback = lineAfter(lines, 'Moderator feedback: ');
    const target = feedback && /Return to: (.*)\.$/.exec(feedback)?.[1];
    const moved = lines
      .filter((l) => l.startsWith(`Turn ${turn}, participant `))
      .map((l) => optionOf(prompt, l.slice(l.indexOf(': ') + 2)))
      .filter((o) => o !== d && o >= 0);
    const u = rng.next();
    if (target && u < HEED) pick = Math.max(0, optionOf(prompt, target));
    else if (moved.length > 0 && u < FOLLOW) pick = moved[moved.length - 1];
    else if (d < 0) pick = rng.int(opts.length);
    else if (rng.next() < WANDER_BASE + WANDER_PER_TURN * (turn - 1))
      pick = d === 0 ? 1 + rng.int(opts.length - 1) : rng.next() < RECOVER ? 0 : other(opts.length, d, rng);
    else pick = d;
  }
  return `I propose: ${opts[pick]}.`;
}

export function vote(view: TeamView, seed: number): string {
  const { prompt, lines, member } = view;
  const proposals = lines
    .map((l) => /^(\d+)\. (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ index: Number(m[1]), option: optionOf(prompt, m[2]) }));
  if (proposals.length === 0) return 'No proposal to vote for.';
  const support = new Map<number, number>();
  for (const p of proposals) support.set(p.option, (support.get(p.option) ?? 0) + 1);
  const top = Math.max(...support.values());
  const own = proposals.find((p) => p.index === member + 1);
  const tied = [...support].filter(([, c]) => c === top).map(([o]) => o);
  const choice = own && tied.includes(own.option) ? own.option : tied[rngFrom(seed, 'surrogate-vote').int(tied.length)];
  const chosen = own && own.option === choice ? own : proposals.find((p) => p.option === choice)!;
  return `${chosen.index}`;
}

export function judgeDrift(view: TeamView, seed: number): string {
  const { prompt, lines } = view;
  const before = lineAfter(lines, /^Solution after turn \d+: /) ?? '';
  const after = lines.filter((l) => /^Solution after turn \d+: /.test(l))[1]?.replace(/^Solution after turn \d+: /, '') ?? '';
  const rng = rngFrom(seed, 'surrogate-drift-judge');
  const changed = optionOf(prompt, before) !== optionOf(prompt, after);
  if (rng.next() >= (changed ? FLAG_CHANGE : FLAG_STABLE)) return 'NO DRIFT: the solution kept to the task.';
  const type = rng.next() < LACK_OF_PROGRESS ? DRIFT_ERROR_TYPES[0] : DRIFT_ERROR_TYPES[1 + rng.int(DRIFT_ERROR_TYPES.length - 1)];
  return `DRIFT: ${type}. Earlier solution: ${before.replace(/\.$/, '')}.`;
}

export function moderate(view: TeamView): string {
  const verdict = lineAfter(view.lines, /^A judge found that turn \d+ drifted: /) ?? '';
  const type = /^DRIFT: ([^.]*)\./.exec(verdict)?.[1] ?? DRIFT_ERROR_TYPES[0];
  const earlier = /Earlier solution: (?:I propose: )?(.*)\.$/.exec(verdict)?.[1];
  return `Feedback on ${type}: the last turn moved away from the task.${earlier ? ` Return to: ${earlier}.` : ''}`;
}
