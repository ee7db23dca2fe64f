import type { ChatMessages } from '../prompt-types.js';
import { parseBoardLines } from '../protocol/board-log.js';
import { writesBoard } from '../protocol/board-team.js';
import { armOf, DEFAULT_PROTOCOL } from '../protocol/registry.js';
import type { TeamCallPlan, TeamRead } from './calls.js';
import { teamSchedule } from './schedules.js';
import { debateMotion } from './demand.js';

/**
 * The prompts of team calls (papers 001 and 003; docs/teams.md). Shared text comes first: the system line
 * says who speaks, the user message starts with the task. Texts read from other calls are shown on one line
 * each (newlines become spaces), so that a reader of the prompt (the surrogate server) can take it apart.
 */

/** 003, RQ4 and appendix F: the eight error types human experts found in drifting debates. */
export const DRIFT_ERROR_TYPES = [
  'lack of progress',
  'low-quality feedback',
  'low-quality engagement',
  'lack of clarity',
  'task non-compliance',
  'knowledge gap',
  'logical error',
  'linguistic error',
] as const;

export const TEAM_TASK = 'Task: ';

/** First lines of the system messages: how a reader tells the calls apart. */
export const TEAM_SYSTEM = {
  relay: (i: number, n: number) =>
    `You are agent ${i + 1} of a relay of ${n} agents working on one task in turn. Each agent sees the task and only the previous agent's hand-off note.`,
  orchestrator: (n: number) => `You are the orchestrator of a hub of ${n} workers.`,
  worker: (i: number, n: number) => `You are worker ${i + 1} of a hub of ${n} workers. You see the task and your own subtask only.`,
  personaGen: () => 'You assign experts to a discussion.',
  participant: (p: number, size: number, t: number, rounds: number) =>
    `You are participant ${p + 1} of ${size} in a discussion of a task, turn ${t} of ${rounds}.`,
  judge: () => 'You judge whether a discussion drifts away from its task.',
  moderator: (size: number) => `You are the moderator of a discussion between ${size} experts.`,
  extractor: () => 'You extract the solution of a task from a discussion contribution.',
  /** The belief table's observer (arm table) and the observer-style extractor (arm extract), of a relay or hub. */
  observer: (team: string) =>
    `You are the observer of ${team}. At each hand-off you read the whole output of the member handing off and keep the belief table: a short, revisable ledger of what each member observed and what it believes.`,
  handoffExtractor: (team: string) =>
    `You are the extractor of ${team}. At each hand-off you read the whole output of the member handing off and extract what the later members need.`,
  /** down (debate on demand): a member argues the motion another member called, as itself (persona and hidden beliefs kept). */
  debater: (caller: string, who: string, team: string) => `You argue in a debate called by ${caller}: you are ${who} of ${team}.`,
} as const;

/** down: the team a debater belongs to, as its system line names it. */
export function debatingTeam(dynamics: string | undefined, size: number): string {
  return dynamics === 'hub' ? `a hub of ${size} workers` : `a relay of ${size} agents`;
}

/** down: the offer made to every member whose reply someone reads (relay members but the last, hub workers). */
export const DEBATE_OFFER = (reader: string) =>
  `Debate on demand: if a point of the task is in doubt and the other members could settle it, add a line "DEBATE: <the question>"; each of the other members then argues it once, and ${reader} reads the debate.`;
/** down: a called debate as its debaters and its reader see it, then each argument. */
export const DEBATE_CALLED = (caller: string) => `Debate called by ${caller}: `;
export const ARGUMENT_LINE = (who: string) => `Argument of ${who}: `;
/** down: what a debater is asked for. */
export const DEBATE_ASK = 'Argue the question in one line: your answer, and what it rests on.';

/** The team an observer watches, as its system line names it. */
export function observedTeam(dynamics: string | undefined, size: number): string {
  return dynamics === 'hub' ? `a hub of ${size} workers and their orchestrator` : `a relay of ${size} agents`;
}

/** Observer arms: the member's whole reply as its observer reads it. */
export const TRACE_LINE = (name: string) => `Trace of ${name}: `;
/** extract: an extraction as later members read it. */
export const EXTRACTED_LINE = (name: string) => `Extracted from ${name}: `;

/** table: what the observer is asked for (the paper's ledger of typed entries; the wording is Panta's). */
export const OBSERVER_ASK = (name: string) =>
  `Write the ledger entries for ${name}, one per line: "OBSERVATION: <object> | <claim> | <confidence from 0 to 1>" for a fact it found, a value it computed or a hypothesis it ruled out; "BELIEF: <object> | <claim> | <confidence from 0 to 1>" for its stance (what it holds without having established it, whether the task can be done, whether the answer is ready). An entry on an object already in the table revises it; write nothing for what has not changed.`;

/** extract: what the extractor is asked for. */
export const EXTRACTOR_ASK = 'Extract the facts it established, the values it computed and the hypotheses it ruled out, in one line.';

export const PERSONA_LINE = 'Your persona: ';

/** A text as one prompt line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** The numbered lines of a text (`1. x`, `2) y`), else its non-empty lines. */
function items(text: string): string[] {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const numbered = lines.filter((l) => /^\d+[.)]\s*/.test(l));
  return (numbered.length > 0 ? numbered : lines).map((l) => l.replace(/^\d+[.)]\s*/, '').trim());
}

/** Worker i's subtask in the orchestrator's decomposition: its numbered line, or a part of the task when there is none. */
export function subtaskOf(decomposition: string, i: number, n: number): string {
  return items(decomposition)[i] || `part ${i + 1} of ${n} of the task`;
}

/** Persona p among the generated ones (one per line), or a plain expert when the reply has too few. */
export function generatedPersona(text: string, p: number): string {
  return items(text)[p] || `expert ${p + 1}`;
}

/** A vote's choice: the first number 1..size in the reply, as a participant index (0-based), or null. */
export function parseVote(text: string, size: number): number | null {
  for (const m of text.matchAll(/\d+/g)) {
    const v = Number(m[0]);
    if (v >= 1 && v <= size) return v - 1;
  }
  return null;
}

/** What a team call's prompt is built from. */
export interface TeamPromptInput {
  call: TeamCallPlan;
  /** Team size: relay length, hub workers, debate participants. */
  size: number;
  /** Debate turns. */
  rounds: number;
  question: string;
  /** The reads the call keeps (keptReads), with their texts. */
  reads: readonly { read: TeamRead; text: string }[];
  /** A member's persona text and hidden belief from the population file (personaText), if any. */
  hidden?: string;
  /** The run's protocol (relay and hub arms: board, board_inert, full, sop); absent or glauber: the plain team. */
  arm?: string;
  /** board: the rendered board the call reads at the start of its turn (renderBoard's lines). */
  board?: readonly string[];
  /** Board arms: what a line revises (spec `team.revisions`); absent: object, as before the option. */
  revisions?: 'author' | 'object';
  /** The team schedule (how an observer names the members it reads); absent: a relay. */
  dynamics?: string;
}

/** Board arms: the tool offered to every member whose reply someone reads (paper 001's add_belief / revise_belief). */
export const BOARD_TOOL =
  'Shared belief board: whenever you establish a fact, compute a value or rule out a hypothesis, add a line "BELIEF: <object> | <claim> | <confidence from 0 to 1>". A line about an object already on the board revises its latest entry; nothing is ever deleted.';

/** The tool with revisions `author` (the paper's revise_belief): a line revises only its author's own entry. */
export const BOARD_TOOL_OWN =
  'Shared belief board: whenever you establish a fact, compute a value or rule out a hypothesis, add a line "BELIEF: <object> | <claim> | <confidence from 0 to 1>". A line about an object you wrote on before revises your own entry (you changed your mind); the other members\' entries stay beside it; nothing is ever deleted.';

/** sop: the structured hand-off's form. */
export const SOP_FORM = 'as: Verdict: <what you concluded>; Evidence: <what it rests on>; Next steps: <what is left to do>.';

export const FULL_PLAN = 'Full plan of the orchestrator: ';

/** full: an earlier relay call's whole output, one line. */
export function outputLine(agent: number, text: string): string {
  return `Output of agent ${agent + 1}: ${oneLine(text)}`;
}

function system(first: string, hidden: string | undefined, persona?: string): string {
  let s = first;
  if (persona !== undefined) s += `\n${PERSONA_LINE}${oneLine(persona)}`;
  if (hidden) s += `\n${hidden}`;
  return s;
}

/**
 * The messages of a team call. A `solution` is counted from the votes; with team.solution extracted it is
 * also asked: its reads are then the winning contribution only (solutionMessages).
 */
export function renderTeamCall(input: TeamPromptInput): ChatMessages {
  const c = callContext(input);
  const { call, size, hidden, task, board, tool } = c;
  switch (call.role) {
    case 'relay':
      return relayMessages(c);
    case 'orchestrator':
      return {
        system: system(TEAM_SYSTEM.orchestrator(size), hidden),
        user: `${task}${board}Split the task into exactly ${size} subtasks, one per line, numbered 1 to ${size}.${tool}`,
      };
    case 'worker':
      return workerMessages(c);
    case 'aggregator':
      return aggregatorMessages(c);
    case 'persona-gen':
      return {
        system: TEAM_SYSTEM.personaGen(),
        user: `${task}Name ${size} different experts who would solve this task together, one per line, numbered 1 to ${size}.`,
      };
    case 'persona':
      return personaMessages(c);
    case 'vote':
      return voteMessages(c);
    case 'drift-judge':
      return driftJudgeMessages(c);
    case 'feedback':
      return feedbackMessages(c);
    case 'solution':
      return solutionMessages(c);
    case 'observer':
    case 'extractor':
      return observerMessages(c);
    case 'debater':
      return debaterMessages(c);
    default:
      throw new Error(`a ${call.role} call has no prompt`);
  }
}

/** What every team call's prompt is made of: the call, its arm, the task, the board, and the reads by kind. */
interface CallContext {
  call: TeamCallPlan;
  size: number;
  rounds: TeamPromptInput['rounds'];
  hidden: string | undefined;
  arm: string;
  task: string;
  board: string;
  tool: string;
  of(kind: TeamRead['kind']): { read: TeamRead; text: string }[];
  persona: string | undefined;
  /** How the team names member `a` (relay agents, hub workers and the orchestrator). */
  name(a: number): string;
  /** extract: the extractions the call reads, one line each. */
  extracts: string;
  dynamics: string | undefined;
  /** down: the debates called in the replies the call reads (`note`, `report`), each with its arguments; empty otherwise. */
  debates: string;
  /** down: the debate offer, on its own line, for a member whose reply someone reads; empty otherwise. */
  offer: string;
  /** down, a debater: the caller's reply it reads, its motion and the rest. */
  motion: { read: TeamRead; question: string | null; rest: string } | undefined;
}

function callContext(input: TeamPromptInput): CallContext {
  const { call, size, rounds, question, hidden } = input;
  const arm = input.arm ?? DEFAULT_PROTOCOL;
  const writes = writesBoard(arm);
  const demand = armOf(arm).demand === 'debate';
  // In the board arms the board lines of a reply are passed on the board only, never in the text passed on; in
  // down a reply's DEBATE line is passed on as its debate, not in the note or report.
  const reads = writes
    ? input.reads.map((r) => ({ read: r.read, text: parseBoardLines(r.text).rest }))
    : demand
      ? input.reads.map((r) => ({ read: r.read, text: debateMotion(r.text).rest }))
      : input.reads;
  const board = input.board && input.board.length > 0 ? `${input.board.join('\n')}\n` : '';
  const tool = writes ? `\n${input.revisions === 'author' ? BOARD_TOOL_OWN : BOARD_TOOL}` : '';
  const task = `${TEAM_TASK}${question}\n`;
  const of = (kind: TeamRead['kind']) => reads.filter((r) => r.read.kind === kind);
  const personas = of('personas')[0]?.text;
  const persona = personas !== undefined ? generatedPersona(personas, call.agent) : undefined;
  const name = teamSchedule(input.dynamics ?? 'relay').memberName(size);
  const extracts = of('extract')
    .map((r) => `${EXTRACTED_LINE(name(r.read.agent))}${oneLine(r.text)}\n`)
    .join('');
  let debates = '';
  let offer = '';
  if (demand) {
    const args = input.reads.filter((r) => r.read.kind === 'argument');
    for (const r of input.reads) {
      if (r.read.kind !== 'note' && r.read.kind !== 'report') continue;
      const question = debateMotion(r.text).question;
      if (question === null) continue;
      debates += `${DEBATE_CALLED(name(r.read.agent))}${question}\n`;
      for (const a of args) if (a.read.of === r.read.agent) debates += `${ARGUMENT_LINE(name(a.read.agent))}${oneLine(a.text)}\n`;
    }
    const hands = (call.role === 'relay' && call.agent < size - 1) || (call.role === 'worker' && size > 1);
    if (hands) offer = `\n${DEBATE_OFFER(call.role === 'relay' ? 'the next agent' : 'the orchestrator')}`;
  }
  const moved = input.reads.find((r) => r.read.kind === 'motion');
  const motion = moved ? { read: moved.read, ...debateMotion(moved.text) } : undefined;
  const dynamics = input.dynamics;
  return { call, size, rounds, hidden, arm, task, board, tool, of, persona, name, extracts, dynamics, debates, offer, motion };
}

/**
 * down: a debater's call: the caller's motion and its reply (note or report), the arguments before its own;
 * it argues as the member it is (its persona and hidden beliefs), in one line.
 */
function debaterMessages(c: CallContext): ChatMessages {
  const { call, size, hidden, task, of, name, dynamics } = c;
  const motion = c.motion;
  const caller = motion ? name(motion.read.agent) : '';
  const args = of('argument')
    .map((r) => `${ARGUMENT_LINE(name(r.read.agent))}${oneLine(r.text)}\n`)
    .join('');
  const reply = dynamics === 'hub' ? 'Its report: ' : 'Its hand-off note: ';
  return {
    system: system(TEAM_SYSTEM.debater(caller, name(call.agent), debatingTeam(dynamics, size)), hidden),
    user: `${task}${DEBATE_CALLED(caller)}${motion?.question ?? ''}\n${reply}${oneLine(motion?.rest ?? '')}\n${args}${DEBATE_ASK}`,
  };
}

/**
 * An observer arm's call at a hand-off: the observer (table) reads the table so far and the member's whole
 * reply and writes ledger entries; the extractor (extract) reads the reply alone and writes one line.
 */
function observerMessages(c: CallContext): ChatMessages {
  const { call, size, task, board, of, name, dynamics } = c;
  const trace = of('trace')[0]?.text ?? '';
  const who = name(call.agent);
  const team = observedTeam(dynamics, size);
  if (call.role === 'extractor')
    return {
      system: TEAM_SYSTEM.handoffExtractor(team),
      user: `${task}${TRACE_LINE(who)}${oneLine(trace)}\n${EXTRACTOR_ASK}`,
    };
  return {
    system: TEAM_SYSTEM.observer(team),
    user: `${task}${board}${TRACE_LINE(who)}${oneLine(trace)}\n${OBSERVER_ASK(who)}`,
  };
}

/** A relay member: the earlier outputs it reads, the hand-off note, and the note or answer it writes. */
function relayMessages(c: CallContext): ChatMessages {
  const { call, size, hidden, arm, task, board, tool, of, extracts, debates, offer } = c;
  const note = of('note')[0];
  const last = call.agent === size - 1;
  const outputs = of('output')
    .map((r) => `${outputLine(r.read.agent, r.text)}\n`)
    .join('');
  return {
    system: system(TEAM_SYSTEM.relay(call.agent, size), hidden),
    user:
      task +
      board +
      extracts +
      outputs +
      (note ? `Hand-off note from agent ${call.agent}: ${oneLine(note.text)}\n` : 'You are the first agent.\n') +
      debates +
      (last
        ? 'Give the final answer to the task in one line.'
        : armOf(arm).handoff === 'sop'
          ? `Work on the task, then write the hand-off note for the next agent in one line, ${SOP_FORM}`
          : `Work on the task, then write a short hand-off note for the next agent in one line: what you found, and what is left to do.${tool}${offer}`),
  };
}

/** A hub worker: its subtask of the orchestrator's plan. */
function workerMessages(c: CallContext): ChatMessages {
  const { call, size, hidden, arm, task, board, tool, of, extracts, offer } = c;
  const plan = of('decomposition')[0]?.text ?? '';
  return {
    system: system(TEAM_SYSTEM.worker(call.agent, size), hidden),
    user:
      task +
      board +
      extracts +
      (armOf(arm).earlier === 'output' ? `${FULL_PLAN}${oneLine(plan)}\n` : '') +
      `Your subtask: ${oneLine(subtaskOf(plan, call.agent, size))}\n` +
      (armOf(arm).handoff === 'sop'
        ? `Do your subtask and report in one line, ${SOP_FORM}`
        : `Do your subtask and report what you found in one line.${tool}${offer}`),
  };
}

/** The hub's aggregator: the plan and the workers' reports. */
function aggregatorMessages(c: CallContext): ChatMessages {
  const { size, hidden, task, board, of, extracts, debates } = c;
  const plan = of('decomposition')[0]?.text ?? '';
  const reports = of('report')
    .map((r) => `Report of worker ${r.read.agent + 1}: ${oneLine(r.text)}\n`)
    .join('');
  return {
    system: system(TEAM_SYSTEM.orchestrator(size), hidden),
    user: `${task}${board}${extracts}Your plan: ${oneLine(plan)}\n${reports}${debates}Give the final answer to the task in one line.`,
  };
}

/** A debate participant's turn: the contributions, the draft and the moderator's feedback. */
function personaMessages(c: CallContext): ChatMessages {
  const { call, size, rounds, hidden, task, of, persona } = c;
  const lines = of('contribution')
    .map((r) => `Turn ${r.read.turn}, participant ${r.read.agent + 1}: ${oneLine(r.text)}\n`)
    .join('');
  const draft = of('draft')[0];
  const feedback = of('feedback').filter((r) => r.text.trim() !== '')[0];
  return {
    system: system(TEAM_SYSTEM.participant(call.agent, size, call.sweep, rounds), hidden, persona),
    user:
      task +
      lines +
      (draft ? `Current draft (solution of turn ${draft.read.turn}): ${oneLine(draft.text)}\n` : '') +
      (feedback ? `Moderator feedback: ${oneLine(feedback.text)}\n` : '') +
      (draft ? 'Improve the current draft or propose a better solution, in one line.' : 'Propose a first solution, in one line.'),
  };
}

/** A debate vote on the proposed solutions. */
function voteMessages(c: CallContext): ChatMessages {
  const { call, size, rounds, hidden, task, of, persona } = c;
  const options = of('contribution')
    .map((r) => `${r.read.agent + 1}. ${oneLine(r.text)}\n`)
    .join('');
  return {
    system: system(TEAM_SYSTEM.participant(call.agent, size, call.sweep, rounds), hidden, persona),
    user: `${task}Proposed solutions:\n${options}Vote for the best solution: reply with its number only.`,
  };
}

/** The drift judge: the solutions before and after a turn. */
function driftJudgeMessages(c: CallContext): ChatMessages {
  const { call, task, of } = c;
  const before = of('draft')[0];
  const after = of('solution')[0];
  return {
    system: TEAM_SYSTEM.judge(),
    user:
      task +
      `Solution after turn ${call.sweep - 1}: ${oneLine(before?.text ?? '')}\n` +
      `Solution after turn ${call.sweep}: ${oneLine(after?.text ?? '')}\n` +
      `Did the discussion get worse or move away from the task? Reply "DRIFT: <error type>" with one of: ${DRIFT_ERROR_TYPES.join(', ')}; or "NO DRIFT".`,
  };
}

/** The moderator's feedback on a turn that drifted. */
function feedbackMessages(c: CallContext): ChatMessages {
  const { call, size, task, of } = c;
  const verdict = of('verdict')[0]?.text ?? '';
  const lines = of('contribution')
    .map((r) => `Participant ${r.read.agent + 1}: ${oneLine(r.text)}\n`)
    .join('');
  const solution = of('solution')[0]?.text ?? '';
  return {
    system: TEAM_SYSTEM.moderator(size),
    user:
      task +
      `A judge found that turn ${call.sweep} drifted: ${oneLine(verdict)}\n` +
      lines +
      `Solution of turn ${call.sweep}: ${oneLine(solution)}\n` +
      'Write one short piece of feedback for the participants that names the error and how to fix it.',
  };
}

export const EXTRACT_LINE = 'Contribution: ';

/** The solution-extraction call (003, appendix D): the turn's solution taken out of the winning contribution. */
function solutionMessages(c: CallContext): ChatMessages {
  const winner = c.of('contribution')[0]?.text ?? '';
  return {
    system: TEAM_SYSTEM.extractor(),
    user:
      c.task +
      `${EXTRACT_LINE}${oneLine(winner)}\n` +
      'Extract the solution to the task from this contribution: leave out agreement, disagreement and explanations, ' +
      'change nothing else, and reply with the solution only.',
  };
}
