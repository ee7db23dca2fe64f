import type { ChatMessages, PromptContext, PromptTemplate } from '../prompt-types.js';
import { renderDriftJudge, renderModerator } from './prompts.js';
import { renderSsvpCall, renderSummary } from './ssvp.js';

/**
 * The coordination protocols, one object each, in one table whose keys are the names a spec's `protocol`
 * accepts. Everything that varies by protocol is read from its object: which agents an update reads (the
 * schedule, `panta plan`'s mean degree, the context bound), what an agent's version carries (answer, SSVP
 * summary, board entries), where its runs run (populations, team schedules), the extra calls it makes and
 * what `panta plan` counts for them, and the rows `panta verify` allows. A protocol that needs new engine
 * behaviour adds it where the engine reads these fields (docs: CONTRIBUTING.md, "Adding a protocol").
 */

/** Roles of the calls a population protocol adds to the agent's (rows of the events table). */
export type ProtocolCallRole = 'summary' | 'merge' | 'judge' | 'moderator';

/** What `panta plan` counts for one kind of extra call of a run. */
export interface ProtocolCallCost {
  /** The call kind shown in the plan (a row of its calls table). */
  kind: string;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** A ceiling (made only when something holds: a merge above tau, a moderator after a drift). */
  atMost: boolean;
}

/** What a protocol's cost sees of a population run. */
export interface ProtocolCostInput {
  /** Agents, sweeps after the initial answers, and the question. */
  n: number;
  sweeps: number;
  question: string;
  /** The agent template's system message (SSVP summaries quote it). */
  system: string;
  /** Mean neighbours an update quotes (the graph's mean degree, as this protocol reads it). */
  k: number;
  /** Tokens of every answer (max_tokens). */
  answer: number;
  /** Tokens of a rendered prompt at the plan's characters per token. */
  tokens(messages: ChatMessages): number;
}

/** Renders one of a protocol's own calls from its context (`PromptContext.kind` names the call). */
export type ProtocolPrompt = (template: PromptTemplate, ctx: PromptContext) => ChatMessages;

/** The calls a protocol prompts for, by `PromptContext.kind`. */
export type ProtocolPrompts = Readonly<Partial<Record<Exclude<NonNullable<PromptContext['kind']>, 'agent'>, ProtocolPrompt>>>;

export interface ProtocolDef {
  /** One line: what the protocol does (documentation). */
  readonly about: string;
  /** Whom an update reads besides the agent's own previous answer: its geometry's neighbours, nobody, or every other agent. */
  readonly reads: 'neighbours' | 'none' | 'everyone';
  /**
   * What an agent's version carries: its answer; an SSVP summary with it (a ContextSummary call per event,
   * execute-ssvp.ts); or its live board entries (board.ts: the agent reads entries and replies JSON).
   */
  readonly version: 'answer' | 'summary' | 'board';
  /** Runs on asynchronous and synchronous populations. */
  readonly population: boolean;
  /** The team schedules whose arm it is (relay and hub arms; debate's mitigations). */
  readonly teams: readonly ('relay' | 'hub' | 'debate')[];
  /** Stops between sweeps for protocol calls on the snapshot (drift-policy's judge and moderator). */
  readonly boundaries?: boolean;
  /** The prompts of its own calls (renderPrompt renders a context of that kind with them). */
  readonly prompts?: ProtocolPrompts;
  /** Roles of the extra calls its population runs may write (`panta verify` refuses any other). */
  readonly calls: readonly ProtocolCallRole[];
  /**
   * As a team arm: relay and hub members write board entries (`shown` at the start of each turn, or `inert`:
   * never shown), read every earlier call's whole `output`, or hand off in the `sop` form; a debate adds
   * DRIFTPolicy's feedback after a drifting turn (`policy`) or writes the turn again (`regenerate`); `judge:
   * gold` replaces the DRIFTJudge call by the gold verdict (no call), so that the policy runs without the judge.
   * `observer`: an observer call follows each hand-off (relay members but the last, the orchestrator, hub
   * workers) and reads the member's whole reply: `table` writes typed entries to a revisable ledger, the belief
   * table, shown at the start of every later turn; `extract` writes what the later members need, shown beside
   * the hand-off. `demand: 'debate'` (debate on demand): a member whose reply someone reads (relay members but
   * the last, hub workers) may call a debate with a line `DEBATE: <question>`; the team's other members argue
   * it in turn, one call each, planned and skipped when no debate was called, and the reader of the caller's
   * reply (the next relay member, the aggregator) is shown the debate.
   */
  readonly arm?: {
    board?: 'shown' | 'inert';
    observer?: 'table' | 'extract';
    demand?: 'debate';
    earlier?: 'output';
    handoff?: 'sop';
    debate?: 'policy' | 'regenerate';
    judge?: 'gold';
  };
  /**
   * Added to the fingerprint of a sweep that grids this protocol when its behaviour changed under its name,
   * so that a corpus written before is never resumed by the new behaviour (absent: nothing added).
   */
  readonly fingerprint?: string;
  /** The extra calls `panta plan` counts for one population run (absent: none). */
  cost?(run: ProtocolCostInput): ProtocolCallCost[];
}

/** Tokens an SSVP summary (and a merge) quotes: the agent's timestamped context, its answer and its neighbours'. */
function summaryQuote(run: ProtocolCostInput): number {
  return run.tokens(renderSummary(run.system, run.question, [])) + (1 + run.k) * (run.answer + 4);
}

/** SSVP as published: a ContextSummary per event. */
function summaryCost(run: ProtocolCostInput): ProtocolCallCost[] {
  const calls = run.n + run.n * run.sweeps;
  return [{ kind: 'summary', calls, promptTokens: calls * summaryQuote(run), completionTokens: calls * run.answer, atMost: false }];
}

/** ssvp: summaries, and at most one ContextMerge per neighbour and update (pairs above tau only). */
function ssvpCost(run: ProtocolCostInput): ProtocolCallCost[] {
  const summaries = summaryCost(run);
  if (run.k <= 0) return summaries;
  const merges = run.n * run.sweeps * run.k;
  const prompt = merges * (summaryQuote(run) + run.answer);
  return [...summaries, { kind: 'merge', calls: merges, promptTokens: prompt, completionTokens: merges * run.answer, atMost: true }];
}

/** drift-policy: a DRIFTJudge call at each boundary after the second sweep, and a moderator after a drift. */
function driftPolicyCost(run: ProtocolCostInput): ProtocolCallCost[] {
  if (run.sweeps < 2) return [];
  const boundaries = run.sweeps - 1;
  const call = (kind: string, messages: ChatMessages, atMost: boolean): ProtocolCallCost => ({
    kind,
    calls: boundaries,
    promptTokens: boundaries * (run.tokens(messages) + 2 * run.answer),
    completionTokens: boundaries * run.answer,
    atMost,
  });
  return [
    call('drift-judge', renderDriftJudge(run.question, run.sweeps, '', ''), false),
    call('moderator', renderModerator(run.question, run.sweeps, '', ''), true),
  ];
}

/** SSVP as published: the ContextSummary and ContextMerge prompts (the agent's timestamped context). */
const SUMMARY_PROMPTS: ProtocolPrompts = { summary: renderSsvpCall, 'context-merge': renderSsvpCall };

/** drift-policy: the DRIFTJudge and the moderator compare the majority answer across a boundary. */
const DRIFT_PROMPTS: ProtocolPrompts = {
  'drift-judge': (_, ctx) => renderDriftJudge(ctx.question, ctx.sweep, ctx.before ?? '', ctx.after ?? ''),
  moderator: (_, ctx) => renderModerator(ctx.question, ctx.sweep, ctx.before ?? '', ctx.after ?? ''),
};

const PLAIN = { reads: 'neighbours', version: 'answer', population: true, teams: [], calls: [] } as const;

/**
 * The built-in protocols: the keys are the names a spec's `protocol` accepts, in the schema's order, before
 * those studies register (the belief board study's `belief-board` and its relay and hub arms `board`,
 * `board_inert`, `full` and `sop`, which use the mechanisms below: a `board` version, an `arm`).
 */
export const PROTOCOLS = {
  glauber: {
    ...PLAIN,
    about: "each update reads the neighbours' answers (the plain team in team schedules)",
    teams: ['relay', 'hub', 'debate'],
  },
  isolated: { ...PLAIN, about: 'each update reads only its own previous answer', reads: 'none' },
  ssvp: {
    ...PLAIN,
    about: 'SSVP as published: ContextSummary per event, ContextMerge with each neighbour whose divergence exceeds tau',
    version: 'summary',
    calls: ['summary', 'merge'],
    prompts: SUMMARY_PROMPTS,
    fingerprint: '\0ssvp as published',
    cost: ssvpCost,
  },
  'drift-policy': {
    ...PLAIN,
    about: "a judge compares the majority answer across sweeps; on drift a moderator's message joins the next sweep",
    teams: ['debate'],
    boundaries: true,
    arm: { debate: 'policy' },
    calls: ['judge', 'moderator'],
    prompts: DRIFT_PROMPTS,
    cost: driftPolicyCost,
  },
  'drift-policy-gold': {
    ...PLAIN,
    about: "debate: DRIFTPolicy alone, its moderator's feedback after each turn whose gold score fell (no judge call)",
    population: false,
    teams: ['debate'],
    arm: { debate: 'policy', judge: 'gold' },
  },
  regenerate: {
    ...PLAIN,
    about: 'debate: a turn the judge finds drifting is written again',
    population: false,
    teams: ['debate'],
    arm: { debate: 'regenerate' },
  },
  'no-sync': {
    ...PLAIN,
    about: 'SSVP summaries measured, never merged',
    version: 'summary',
    calls: ['summary'],
    prompts: SUMMARY_PROMPTS,
    cost: summaryCost,
  },
  'full-broadcast': {
    ...PLAIN,
    about: "every update reads every other agent's answer; SSVP summaries measured",
    reads: 'everyone',
    version: 'summary',
    calls: ['summary'],
    prompts: SUMMARY_PROMPTS,
    cost: summaryCost,
  },
} as const satisfies Record<string, ProtocolDef>;

export type ProtocolName = keyof typeof PROTOCOLS;

/** The spec's default protocol, and a team's plain arm (no board, no mitigation). */
export const DEFAULT_PROTOCOL: ProtocolName = 'glauber';

/** The built-in names first, in table order, then any registered ones (the schema's enum, live). */
export const PROTOCOL_NAMES: string[] = Object.keys(PROTOCOLS);

const registered = new Map<string, ProtocolDef>(Object.entries(PROTOCOLS));

/** Each call kind's prompt, from every registered protocol that prompts for it (first registered wins). */
let promptsByKind: Map<string, ProtocolPrompt> | undefined;

/**
 * Adds a protocol beside the built-in table (a plug-in, or a test's toy protocol): the schema accepts its
 * name from then on, and plan, run and verify read its object. A name already taken is an error.
 */
export function registerProtocol(name: string, def: ProtocolDef): void {
  if (registered.has(name)) throw new Error(`protocol ${name} is already registered`);
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`protocol name ${JSON.stringify(name)}: letters, digits, ".", "_" and "-" only`);
  registered.set(name, def);
  PROTOCOL_NAMES.push(name);
  promptsByKind = undefined;
}

export function isProtocolName(name: string): name is ProtocolName {
  return registered.has(name);
}

/** The object of a protocol the schema accepted. */
export function protocolOf(name: string): ProtocolDef {
  const def = registered.get(name);
  if (!def) throw new Error(`protocol ${name} is not registered`);
  return def;
}

/** Protocols whose versions carry an SSVP summary (a ContextSummary call per event). */
export function isSummaryProtocol(name: string): boolean {
  return registered.get(name)?.version === 'summary';
}

/** Protocols whose agents read and write a belief board (versions carry live entries). */
export function isBoardProtocol(name: string): boolean {
  return registered.get(name)?.version === 'board';
}

/** The protocols a team schedule runs as its arms, in table order (`glauber` is the plain team). */
export function teamArms(dynamics: string): string[] {
  return [...registered].filter(([, def]) => (def.teams as readonly string[]).includes(dynamics)).map(([name]) => name);
}

/** A team arm's behaviour (none for a name that is not one, or the plain team). */
export function armOf(name: string): NonNullable<ProtocolDef['arm']> {
  return registered.get(name)?.arm ?? {};
}

/** The prompt of a protocol call of this kind (undefined for an agent's update). */
export function protocolPrompt(kind: string): ProtocolPrompt | undefined {
  if (!promptsByKind) {
    promptsByKind = new Map();
    for (const def of registered.values())
      for (const [k, render] of Object.entries(def.prompts ?? {})) if (!promptsByKind.has(k)) promptsByKind.set(k, render);
  }
  return promptsByKind.get(kind);
}
