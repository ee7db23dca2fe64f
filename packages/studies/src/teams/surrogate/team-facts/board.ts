import { BOARD_ENTRY, BOARD_TOOL, BOARD_TOOL_OWN, DEBATE_OFFER, FULL_PLAN, objectKey, SOP_FORM } from '@panta/core';
import { mentions, type TeamView } from '@panta/llm';

/**
 * The surrogate's side of paper 001's relay and hub arms (docs/teams.md, "Belief board"), read from the
 * prompt's text as a server would: the board it is shown, whether it is offered the board tool, and the
 * sop and full arms' forms. A member notes one entry per part of the answer it holds (`part k`); with the
 * board in view it writes only what is new or what it now believes otherwise (a revision: its review of
 * the hand-off changed the part, or it found the part again differently), without it (board_inert) it
 * notes every part it holds. With the board in view a member takes up a part it lacks from the board.
 */
export interface BoardView {
  /** The tool is offered (board and board_inert). */
  tool: boolean;
  /** The board's latest claim per object, as shown (empty in board_inert). */
  shown: Map<string, string>;
  sop: boolean;
  /** full: the whole outputs of earlier calls (relay) or the whole plan (hub); extract: the extractions. */
  outputs: string[];
  /** down: the member is offered to call a debate. */
  debate: boolean;
  /** down: the arguments of the debates it is shown. */
  arguments: string[];
}

const ENTRY = /^- \[e\d+\.\d+\] .+? on (.+?): (.*) \((?:(?:observation|belief), )?confidence [\d.]+\)(?: \[revised; .*\])?$/;
const OUTPUT = /^Output of agent \d+: (.*)$/;
/** extract: an extraction of an earlier hand-off, read like an earlier output. */
const EXTRACTED = /^Extracted from (?:agent \d+|worker \d+|orchestrator): (.*)$/;
/** down: an argument of a debate the reader is shown. */
const ARGUMENT = /^Argument of (?:agent \d+|worker \d+): (.*)$/;
const OFFER = DEBATE_OFFER('').slice(0, 20);

export function boardView(view: TeamView): BoardView {
  const shown = new Map<string, string>();
  const outputs: string[] = [];
  const args: string[] = [];
  for (const line of view.lines) {
    const a = ARGUMENT.exec(line)?.[1];
    if (a !== undefined) args.push(a);
    if (line.startsWith(BOARD_ENTRY)) {
      const m = ENTRY.exec(line);
      if (m) shown.set(objectKey(m[1]), m[2]);
    }
    const o = OUTPUT.exec(line)?.[1] ?? EXTRACTED.exec(line)?.[1];
    if (o !== undefined) outputs.push(o);
    if (line.startsWith(FULL_PLAN)) outputs.push(line.slice(FULL_PLAN.length));
  }
  const text = view.lines.join('\n');
  return {
    tool: text.includes(BOARD_TOOL) || text.includes(BOARD_TOOL_OWN),
    shown,
    sop: text.includes(SOP_FORM),
    outputs,
    debate: text.includes(OFFER),
    arguments: args,
  };
}

/** The object of the answer's part i on the board. */
export function partObject(i: number): string {
  return `part ${i + 1}`;
}

/** A part's value read from a claim: the fact, one of its wrong versions, or null. */
export function claimValue(claim: string, fact: string, wrong: readonly string[]): string | null {
  const bad = wrong.find((w) => mentions(claim, w));
  if (bad !== undefined) return bad;
  return mentions(claim, fact) ? fact : null;
}

/**
 * The board lines a member writes for the parts it holds: all of them when it cannot see the board, else
 * the parts the board lacks or states otherwise. Confidence: higher for what it found or checked itself.
 */
export function boardLines(known: readonly (string | null)[], board: BoardView, own: ReadonlySet<number>): string[] {
  if (!board.tool) return [];
  const out: string[] = [];
  known.forEach((k, i) => {
    if (k === null) return;
    const onBoard = board.shown.get(objectKey(partObject(i)));
    if (onBoard !== undefined && onBoard === k) return;
    out.push(`BELIEF: ${partObject(i)} | ${k} | ${own.has(i) ? 0.9 : 0.7}`);
  });
  return out;
}

/** Reply text with board lines after it (one per line), or the text alone. */
export function withBoardLines(text: string, lines: readonly string[]): string {
  return lines.length === 0 ? text : `${text}\n${lines.join('\n')}`;
}
