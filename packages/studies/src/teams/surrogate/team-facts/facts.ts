import { rngFrom, type Prompt, type Rng } from '@panta/core';
import { boardLines, boardView, claimValue, partObject, withBoardLines, type BoardView } from './board.js';
import { lineAfter, mentions, type TeamView } from '@panta/llm';

/**
 * Relay and hub members of the surrogate (paper 001): a task is a list of facts (the prompt's `facts`, else
 * its first accepted answer, with its known false answers as the wrong versions). A member finds at most
 * CAP facts per call, and fewer when its token budget is short; a hand-off note keeps each fact it
 * carries with a probability that falls once the budget is too short to write it down. So at a constant
 * total budget two members beat one (each finds more), and long chains lose what short ones keep
 * (smaller budgets, more lossy hops): accuracy rises, then falls. Hidden beliefs (`Leaning:` in notes, the
 * lossy trace of a belief a message carries) set how far a member trusts a note: the same belief as its
 * writer's fixes more and breaks less than none, a different one breaks more.
 */
const CAP = 2;
const TOKENS_PER_FACT = 40;
const P_FIND = 0.85;
const P_RIGHT_ALONE = 0.75;
/** Tokens a note needs to carry its facts without loss. */
const NOTE_TOKENS = 200;
const RETENTION = 0.92;
const REVIEW = {
  same: { fix: 0.35, flip: 0.02 },
  none: { fix: 0.1, flip: 0.06 },
  different: { fix: 0.05, flip: 0.25 },
} as const;
const AGGREGATE_KEEP = 0.95;
/** Chances that a member takes up a part it lacks from the board (arm board) or from an earlier output (full). */
const P_BOARD = 0.4;
const P_FULL = 0.3;
/** What a note or report says before its counts (sop: its verdict). */
const SAID = /\. (?:Open|Evidence): /;

/** Per fact: its text when found right, a false answer when found wrong, or null (not found). */
type Known = (string | null)[];

function factsOf(prompt: Prompt): string[] {
  return prompt.facts && prompt.facts.length > 0 ? [...prompt.facts] : [prompt.accepted[0]];
}

/** Wrong versions of a fact exist only for one-fact tasks (the prompt's known false answers). */
function wrongOf(prompt: Prompt): readonly string[] {
  return factsOf(prompt).length === 1 ? prompt.false_answers : [];
}

export function readKnown(prompt: Prompt, text: string): Known {
  const facts = factsOf(prompt);
  const wrong = wrongOf(prompt);
  return facts.map((f) => {
    const bad = wrong.find((w) => mentions(text, w));
    if (bad !== undefined) return bad;
    return mentions(text, f) ? f : null;
  });
}

export function list(known: Known): string {
  const found = known.filter((k): k is string => k !== null);
  return found.length > 0 ? found.join('; ') : 'nothing yet';
}

/**
 * What of a member's hidden text (persona, beliefs) shows through in its note: a mark of it, the same for
 * the same text (not its words, which could read as an answer).
 */
function leaningOf(hidden: string | undefined): string | undefined {
  return hidden === undefined
    ? undefined
    : `style-${rngFrom('leaning', hidden)
        .int(1 << 30)
        .toString(36)}`;
}

/** Looks for the facts still missing, at most `capacity` of them, in a seeded order. */
function discover(prompt: Prompt, known: Known, capacity: number, rng: Rng, only?: ReadonlySet<number>): void {
  const facts = factsOf(prompt);
  const wrong = wrongOf(prompt);
  const open = known.map((k, i) => (k === null && (!only || only.has(i)) ? i : -1)).filter((i) => i >= 0);
  for (let i = open.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [open[i], open[j]] = [open[j], open[i]];
  }
  for (const i of open.slice(0, capacity)) {
    const u = rng.next();
    if (wrong.length > 0) known[i] = u < P_RIGHT_ALONE ? facts[i] : wrong[rng.int(wrong.length)];
    else if (u < P_FIND) known[i] = facts[i];
  }
}

export function relayReply(view: TeamView, seed: number, maxTokens: number): string {
  const { prompt, lines, member, size } = view;
  const rng = rngFrom(seed, 'surrogate-relay');
  const board = boardView(view);
  const note = lineAfter(lines, /^Hand-off note from agent \d+: /);
  const known: Known = note === undefined ? factsOf(prompt).map(() => null) : readKnown(prompt, note.split(SAID)[0]);
  const handed = [...known];
  // A note written under a hidden belief other than its own: the member doubts what it was handed (down calls a debate on it).
  let doubt = false;
  if (note !== undefined) {
    const keep = RETENTION * Math.min(1, maxTokens / NOTE_TOKENS);
    for (let i = 0; i < known.length; i++) if (known[i] !== null && rng.next() >= keep) known[i] = null;
    const theirs = /Leaning: ([^.]*)\./.exec(note)?.[1];
    const mine = leaningOf(view.hidden);
    const review = REVIEW[theirs === undefined && mine === undefined ? 'none' : theirs === mine ? 'same' : 'different'];
    doubt = theirs !== mine;
    const facts = factsOf(prompt);
    const wrong = wrongOf(prompt);
    for (let i = 0; i < known.length; i++) {
      const u = rng.next();
      if (known[i] === facts[i] && wrong.length > 0 && u < review.flip) known[i] = wrong[rng.int(wrong.length)];
      else if (known[i] !== null && known[i] !== facts[i] && u < review.fix) known[i] = facts[i];
    }
  }
  takeUp(view, known, board.shown.size > 0 ? [...board.shown.entries()] : [], board.outputs, seed);
  settle(view, known, board.arguments, seed);
  const before = [...known];
  discover(prompt, known, Math.min(CAP, Math.floor(maxTokens / TOKENS_PER_FACT)), rng);
  if (member === size - 1) return `Answer: ${known.some((k) => k !== null) ? list(known) : 'not found'}.`;
  const open = known.filter((k) => k === null).length;
  const lean = leaningOf(view.hidden);
  const leaning = lean !== undefined ? ` Leaning: ${lean}.` : '';
  if (board.sop)
    return `Verdict: ${list(known)}. Evidence: what the relay found so far. Next steps: ${open > 0 ? 'find the open parts' : 'give the answer'}.${leaning}`;
  // Parts it found itself or changed on review it states with more confidence than parts passed on to it.
  const own = new Set(known.map((k, i) => (k !== null && (k !== before[i] || k !== handed[i]) ? i : -1)).filter((i) => i >= 0));
  const extra = [...boardLines(known, board, own), ...motion(known, board, doubt ? handed : [])];
  return withBoardLines(`Found: ${list(known)}. Open: ${open} of ${known.length} parts.${leaning}`, extra);
}

/**
 * down: a member offered a debate calls one on the first part it could not find; holding every part, on the
 * first part it was handed by a note it doubts (`doubted`: written under another hidden belief); else none.
 */
function motion(known: Known, board: BoardView, doubted: Known = []): string[] {
  if (!board.debate) return [];
  let part = known.indexOf(null);
  if (part < 0) part = doubted.findIndex((k) => k !== null);
  return part >= 0 ? [`DEBATE: what is ${partObject(part)} of the answer?`] : [];
}

/** Chances that a debate's unanimous arguments fill a part the reader lacks, or change one it holds otherwise. */
const P_DEBATE_FILL = 0.8;
const P_DEBATE_CHANGE = 0.5;

/**
 * down: the debates a member reads. Per part the arguments state, when every argument stating it says the
 * same, the reader takes it up where it lacks the part, or changes its own to it, each with its seeded chance.
 */
function settle(view: TeamView, known: Known, args: readonly string[], seed: number): void {
  if (args.length === 0) return;
  const rng = rngFrom(seed, 'surrogate-debate');
  const said = known.map(() => new Set<string>());
  for (const a of args) readKnown(view.prompt, a).forEach((k, i) => k !== null && said[i].add(k));
  said.forEach((values, i) => {
    if (values.size !== 1) return;
    const [v] = values;
    const u = rng.next();
    if (known[i] === null ? u < P_DEBATE_FILL : known[i] !== v && u < P_DEBATE_CHANGE) known[i] = v;
  });
}

/**
 * down: a debater argues the motion's part: it looks for that part once (with its own seeded draw), and states
 * what it found, the arguments before it aside.
 */
export function debaterReply(view: TeamView, seed: number): string {
  const asked = /^Debate called by (?:agent|worker) \d+: what is part (\d+) of the answer\?$/.exec(view.lines[0] ?? '')?.[1];
  const part = asked === undefined ? -1 : Number(asked) - 1;
  const known: Known = factsOf(view.prompt).map(() => null);
  if (part < 0 || part >= known.length) return 'No part of the answer is in question.';
  discover(view.prompt, known, 1, rngFrom(seed, 'surrogate-debater'), new Set([part]));
  return known[part] === null ? `${partObject(part)}: not known to me.` : `${partObject(part)}: ${known[part]}.`;
}

/** The orchestrator's plan: the parts of the answer dealt out to the workers in turn. */
export function decompose(view: TeamView): string {
  const parts = factsOf(view.prompt).length;
  const out: string[] = [];
  for (let w = 0; w < view.size; w++) {
    const mine: number[] = [];
    for (let k = w; k < parts; k += view.size) mine.push(k + 1);
    out.push(`${w + 1}. ${mine.length > 0 ? `Find part ${mine.join(', ')} of the answer.` : 'Check the answer for mistakes.'}`);
  }
  // With the board tool the plan's status goes on the board too: each part open, and whose; the worker that
  // finds a part revises its entry.
  if (boardView(view).tool)
    for (let k = 0; k < parts; k++) out.push(`BELIEF: ${partObject(k)} | open, for worker ${(k % view.size) + 1} | 1`);
  return out.join('\n');
}

export function workerReply(view: TeamView, seed: number, maxTokens: number): string {
  const rng = rngFrom(seed, 'surrogate-worker');
  const subtask = lineAfter(view.lines, 'Your subtask: ') ?? '';
  const parts = new Set(
    (/Find part ([\d, ]+) of the answer/.exec(subtask)?.[1] ?? '')
      .split(',')
      .map((s) => Number(s.trim()) - 1)
      .filter((k) => k >= 0),
  );
  const board = boardView(view);
  if (parts.size === 0)
    return board.sop ? 'Verdict: nothing to add. Evidence: the subtask asks for no part. Next steps: none.' : 'Found: nothing to add.';
  const known: Known = factsOf(view.prompt).map(() => null);
  discover(view.prompt, known, Math.min(CAP, Math.floor(maxTokens / TOKENS_PER_FACT)), rng, parts);
  if (board.sop) return `Verdict: ${list(known)}. Evidence: what the subtask turned up. Next steps: none.`;
  const mine = known.map((k, i) => (parts.has(i) ? k : 'elsewhere'));
  return withBoardLines(`Found: ${list(known)}.`, [...boardLines(known, board, parts), ...motion(mine, board)]);
}

export function aggregate(view: TeamView, seed: number): string {
  const rng = rngFrom(seed, 'surrogate-aggregate');
  const known: Known = factsOf(view.prompt).map(() => null);
  for (const line of view.lines) {
    const report = /^Report of worker \d+: (.*)$/.exec(line)?.[1];
    if (report === undefined) continue;
    readKnown(view.prompt, report.split(SAID)[0]).forEach((k, i) => {
      if (k !== null && known[i] === null && rng.next() < AGGREGATE_KEEP) known[i] = k;
    });
  }
  const board = boardView(view);
  // extract: the extractions of the plan and reports, read like earlier outputs; down: the debates' arguments.
  if (board.shown.size > 0 || board.outputs.length > 0)
    takeUp(view, known, [...board.shown.entries()], board.outputs, seed, AGGREGATE_KEEP);
  settle(view, known, board.arguments, seed);
  return `Answer: ${known.some((k) => k !== null) ? list(known) : 'not found'}.`;
}

/**
 * Board and full arms: a part the member lacks taken up from the board's claim on it, or from an earlier
 * call's output, each with its own seeded chance (separate streams: the plain team's draws are unchanged).
 */
function takeUp(
  view: TeamView,
  known: Known,
  shown: readonly [string, string][],
  outputs: readonly string[],
  seed: number,
  pBoard = P_BOARD,
): void {
  const facts = factsOf(view.prompt);
  const wrong = wrongOf(view.prompt);
  if (shown.length > 0) {
    const rng = rngFrom(seed, 'surrogate-board');
    const claims = new Map(shown);
    for (let i = 0; i < known.length; i++) {
      const claim = claims.get(partObject(i));
      if (known[i] !== null || claim === undefined) continue;
      if (rng.next() < pBoard) known[i] = claimValue(claim, facts[i], wrong);
    }
  }
  if (outputs.length > 0) {
    const rng = rngFrom(seed, 'surrogate-full');
    for (const output of outputs) {
      readKnown(view.prompt, output.split(SAID)[0]).forEach((k, i) => {
        if (k !== null && known[i] === null && rng.next() < P_FULL) known[i] = k;
      });
    }
  }
}
