import { CsrGraph } from './geometry/graph.js';
import { type EdgeLists, graphFor, type RunPlan, runEvents } from './plan.js';
import { isJudgeKind, judgeCalls } from './judge-calls.js';
import { CHARS_PER_TOKEN } from './names.js';
import { type PromptContext, type PromptTemplate, promptLength } from './prompt.js';
import { protocolOf } from './protocol/registry.js';
import { rubric, VERDICT_MAX_TOKENS } from './rubric.js';
import type { PriceTable } from './spec/backend.js';
import type { SweepSpec } from './spec/schema.js';
import { teamAnswerTokens, teamCallCosts, type TeamRoleCost } from './team/cost.js';
import { poolsBudget, teamSchedule } from './team/schedules.js';

/**
 * What a sweep will cost before anything runs (`panta plan`): a pure function of the planned runs, so every
 * gridded axis counts as planSweep expands it. Calls are counted from the schedule (N initial answers and
 * N updates per sweep per run; protocol calls per update or per sweep boundary); tokens are estimated from
 * the prompt text at CHARS_PER_TOKEN characters a token, with every answer max_tokens long (exact with
 * fixed_length, an upper bound without) and each update quoting its own previous answer and the answers of
 * the graph's mean degree of neighbours. Not counted in agents' prompts: a population's hidden texts, board
 * entries beyond an answer's length, a moderator's message (a few hundred characters where they occur).
 */

/** The rate `panta plan` assumes without --calls-per-s: a modest single-GPU vLLM server on 100-token answers. */
export const DEFAULT_CALLS_PER_SECOND = 10;

export type CallKind =
  | 'agent'
  | 'judge'
  | 'summary'
  | 'merge'
  | 'drift-judge'
  | 'moderator'
  | TeamRoleCost['role']
  // A registered protocol's own calls (ProtocolDef.cost), a study's judge calls (registerJudgeCalls).
  | (string & {});

export interface CallCost {
  kind: CallKind;
  calls: number;
  /**
   * True when `calls` is a ceiling: the LLM judge's cache judges an identical answer once, ssvp merges only
   * above tau, a moderator speaks only after a drift, early stopping ends runs sooner.
   */
  atMost: boolean;
  promptTokens: number;
  completionTokens: number;
  /** In the backend's price table's currency, when the spec gives one for this call's backend. */
  cost?: number;
}

/** Agent prompts per (geometry, N): what the context must hold. */
export interface ContextCost {
  geometry: string;
  n: number;
  /** Nominal degree (as the event rows' k). */
  k: number;
  /** Mean neighbours an update quotes (a star's hub quotes N - 1, its leaves one). */
  meanNeighbours: number;
  runs: number;
  events: number;
  /** Estimated prompt tokens of an update that quotes the nominal k answers. */
  updatePromptTokens: number;
}

export interface CampaignCost {
  configurations: number;
  runs: number;
  /** Agent events: (sweeps + 1) N per run. */
  events: number;
  calls: CallCost[];
  total: { calls: number; promptTokens: number; completionTokens: number; cost?: number };
  /** Tokens of every answer: max_tokens; exact when fixedLength, a ceiling otherwise. */
  answerTokens: number;
  /**
   * Relay runs with team.token_budget, per N: each member's answer is the budget split over the chain (`tokens`
   * each), or (pooled) its share of what the members before it left, `tokens` being the even share.
   */
  relayAnswerTokens?: { budget: number; n: number; tokens: number; pooled: boolean }[];
  /** Some run's answers are max_tokens long (false when every run is a relay with a token budget). */
  answersAtMaxTokens: boolean;
  fixedLength: boolean;
  contexts: ContextCost[];
  /** The agents' backend's max_context_tokens, when it has one (the plan has checked every prompt against it). */
  contextLimit?: number;
  callsPerSecond: number;
  /** True when callsPerSecond is DEFAULT_CALLS_PER_SECOND, not given. */
  assumedRate: boolean;
  /** Seconds at callsPerSecond: the agents' calls alone, and every call through the one rate. */
  seconds: { agents: number; all: number };
}

export interface CampaignInput {
  spec: SweepSpec;
  /** planSweep's runs (every gridded axis expanded). */
  runs: readonly RunPlan[];
  /** The template of runs that carry none of their own. */
  template: PromptTemplate;
  edgeLists?: EdgeLists;
  callsPerSecond?: number;
}

const tokens = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

/** Characters of a rendering, system and user together. */
function chars(m: { system: string | number; user: string | number }): number {
  const len = (x: string | number) => (typeof x === 'number' ? x : x.length);
  return len(m.system) + len(m.user);
}

/**
 * The neighbours an update quotes on average: every agent is picked alike (asynchronous, with replacement;
 * synchronous, once per sweep), so it is the graph's mean degree.
 */
function meanDegree(run: RunPlan, edgeLists: EdgeLists): number {
  const reads = protocolOf(run.protocol).reads;
  if (reads === 'none') return 0;
  if (reads === 'everyone') return run.n - 1;
  if (run.geometry.kind === 'meanfield') return run.k;
  const graph = graphFor(run.geometry, run.n, run.seed, edgeLists);
  return graph instanceof CsrGraph ? graph.entries / run.n : graph.k;
}

/** Estimated tokens of a run's initial prompt (t = 0: the question, no neighbours); every agent's is the same text. */
export function initialPromptTokens(template: PromptTemplate, run: RunPlan): number {
  return tokens(
    chars(
      promptLength(template, {
        question: run.prompt.question,
        sweep: 0,
        temperature: run.temperature,
        neighbourAgents: [],
        neighbourAnswers: [],
      }),
    ),
  );
}

/** Characters of an agent's update prompt without the answers it quotes: fixed text plus `k` neighbour lines. */
function updateFrameChars(template: PromptTemplate, run: RunPlan, k: number): number {
  const frame = (count: number) =>
    chars(
      promptLength(template, {
        question: run.prompt.question,
        sweep: run.sweeps,
        temperature: run.temperature,
        previous: '',
        neighbourAgents: new Array<number>(count).fill(run.n - 1),
        neighbourAnswers: new Array<string>(count).fill(''),
      } satisfies PromptContext),
    );
  if (k === 0) return frame(0);
  const one = frame(1);
  const line = frame(2) - one;
  return one + (k - 1) * line;
}

export function campaignCost(input: CampaignInput): CampaignCost {
  const { spec, runs } = input;
  const tally = new CostTally(spec, input.template, input.edgeLists ?? new Map());
  for (const run of runs) {
    if (run.controls.team) tally.addTeamRun(run);
    else tally.addPopulationRun(run);
  }
  const calls = pricedCalls(tally.calls(), spec);
  const sum = (f: (c: CallCost) => number) => calls.reduce((s, c) => s + f(c), 0);
  const priced = calls.every((c) => c.cost !== undefined);
  const rate = input.callsPerSecond ?? DEFAULT_CALLS_PER_SECOND;
  // A team's members are its agents (every team call but the population protocols').
  const teamKinds = new Set<CallKind>(CALL_ORDER.slice(CALL_ORDER.indexOf('relay')));
  const agentCalls = calls.reduce((s, c) => s + (c.kind === 'agent' || teamKinds.has(c.kind) ? c.calls : 0), 0);
  const relayAnswers = tally.relayAnswers;
  return {
    configurations: new Set(runs.map((r) => r.configId)).size,
    runs: runs.length,
    events: tally.events,
    calls,
    total: {
      calls: sum((c) => c.calls),
      promptTokens: sum((c) => c.promptTokens),
      completionTokens: sum((c) => c.completionTokens),
      ...(priced && calls.length > 0 ? { cost: sum((c) => c.cost!) } : {}),
    },
    answerTokens: spec.max_tokens,
    ...(relayAnswers.size > 0 ? { relayAnswerTokens: [...relayAnswers.values()].sort((a, b) => a.n - b.n) } : {}),
    answersAtMaxTokens: runs.some((r) => r.controls.team?.tokenBudget === undefined || !teamSchedule(r.dynamics).splitsBudget),
    fixedLength: spec.fixed_length,
    contexts: [...tally.contexts.values()],
    ...(spec.backend.kind !== 'surrogate' && spec.backend.max_context_tokens !== undefined
      ? { contextLimit: spec.backend.max_context_tokens }
      : {}),
    callsPerSecond: rate,
    assumedRate: input.callsPerSecond === undefined,
    seconds: { agents: agentCalls / rate, all: sum((c) => c.calls) / rate },
  };
}

/** The call kinds in the order the plan lists them (built-in protocols' and teams'); a study's judge calls follow the judge's. */
const CALL_ORDER: CallKind[] = [
  'agent',
  'judge',
  'summary',
  'merge',
  'drift-judge',
  'moderator',
  'relay',
  'orchestrator',
  'worker',
  'aggregator',
  'persona-gen',
  'persona',
  'vote',
  'feedback',
  'observer',
  'extractor',
  'debater',
];

/**
 * Calls and tokens summed by kind over the runs, with the events, the prompt contexts by geometry and size,
 * and the relay answers of split token budgets.
 */
class CostTally {
  readonly kinds = new Map<CallKind, CallCost>();
  readonly contexts = new Map<string, ContextCost>();
  readonly relayAnswers = new Map<string, { budget: number; n: number; tokens: number; pooled: boolean }>();
  events = 0;
  private readonly degrees = new Map<string, number>();
  private readonly answer: number;
  private readonly stopsEarly: boolean;

  constructor(
    private readonly spec: SweepSpec,
    private readonly template: CampaignInput['template'],
    private readonly edgeLists: NonNullable<CampaignInput['edgeLists']>,
  ) {
    this.answer = spec.max_tokens;
    this.stopsEarly = spec.early_stopping !== undefined;
  }

  add(kind: CallKind, calls: number, promptTokens: number, completionTokens: number, atMost: boolean): void {
    const c = this.kinds.get(kind) ?? { kind, calls: 0, atMost: false, promptTokens: 0, completionTokens: 0 };
    c.calls += calls;
    c.promptTokens += promptTokens;
    c.completionTokens += completionTokens;
    c.atMost ||= atMost || this.stopsEarly;
    this.kinds.set(kind, c);
  }

  /** Built-in kinds in CALL_ORDER; kinds of registered protocols that are not built in come last, in the order they were first counted. */
  calls(): CallCost[] {
    const { kinds } = this;
    const order = CALL_ORDER.flatMap((kind) => (kind === 'judge' ? [kind, ...judgeCalls().map((d) => d.kind)] : [kind]));
    return [...order.filter((kind) => kinds.has(kind)), ...[...kinds.keys()].filter((kind) => !order.includes(kind))].map(
      (kind) => kinds.get(kind)!,
    );
  }

  addTeamRun(run: RunPlan): void {
    const { answer } = this;
    const team = run.controls.team!;
    const budget = team.tokenBudget;
    if (budget !== undefined && teamSchedule(run.dynamics).splitsBudget)
      this.relayAnswers.set(`${budget}/${run.n}/${poolsBudget(run)}`, {
        budget,
        n: run.n,
        tokens: teamAnswerTokens(run, answer),
        pooled: poolsBudget(run),
      });
    // A team's calls by role (docs/teams.md); its rows are judged like answers.
    for (const c of teamCallCosts(run, answer)) this.add(c.role, c.calls, c.promptTokens, c.completionTokens, c.atMost);
    this.events += runEvents(run);
    if (this.spec.judge.kind === 'llm') {
      const calls = runEvents(run);
      this.add('judge', calls, calls * (tokens(chars(rubric(run.prompt, ''))) + answer), calls * VERDICT_MAX_TOKENS, true);
    }
  }

  /** A population run: its agents' calls, its prompt context, its protocol's own calls, and the judge's. */
  addPopulationRun(run: RunPlan): void {
    const { answer } = this;
    const tpl = run.template ?? this.template;
    const n = run.n;
    const updates = n * run.sweeps;
    const key = `${run.geometryLabel}/${n}/${run.protocol}`;
    let k = this.degrees.get(key);
    if (k === undefined) this.degrees.set(key, (k = meanDegree(run, this.edgeLists)));
    const initial = initialPromptTokens(tpl, run);
    const update = tokens(updateFrameChars(tpl, run, k)) + (1 + k) * answer;
    this.events += runEvents(run);
    this.add('agent', n + updates, n * initial + updates * update, (n + updates) * answer, false);

    const context = this.contexts.get(`${run.geometryLabel}/${n}`) ?? {
      geometry: run.geometryLabel,
      n,
      k: run.k,
      meanNeighbours: k,
      runs: 0,
      events: 0,
      updatePromptTokens: tokens(updateFrameChars(tpl, run, run.k)) + (1 + run.k) * answer,
    };
    context.runs++;
    context.events += runEvents(run);
    this.contexts.set(`${run.geometryLabel}/${n}`, context);

    // The protocol's own calls (SSVP summaries and merges, drift-policy's judge and moderator): its registry entry counts them.
    const extra = protocolOf(run.protocol).cost?.({
      n,
      sweeps: run.sweeps,
      question: run.prompt.question,
      system: tpl.system,
      k,
      answer,
      tokens: (m) => tokens(chars(m)),
    });
    for (const c of extra ?? []) this.add(c.kind, c.calls, c.promptTokens, c.completionTokens, c.atMost);
    if (this.spec.judge.kind === 'llm') {
      const calls = n + updates;
      this.add('judge', calls, calls * (tokens(chars(rubric(run.prompt, ''))) + answer), calls * VERDICT_MAX_TOKENS, true);
      // The rubrics of a study's table that scores this run.
      for (const def of judgeCalls()) {
        const c = def.cost(run, { answer, answers: calls, tokens: (m) => tokens(chars(m)) });
        if (c) this.add(def.kind, c.calls, c.promptTokens, c.completionTokens, true);
      }
    }
  }
}

/** Prompt tokens rounded (a graph of uneven degree quotes a fractional mean of answers per update), and the cost where priced. */
function pricedCalls(calls: CallCost[], spec: SweepSpec): CallCost[] {
  for (const c of calls) {
    c.promptTokens = Math.round(c.promptTokens);
    const price = isJudgeKind(c.kind) ? judgePrice(spec) : agentPrice(spec);
    if (price) c.cost = (c.promptTokens * price.prompt_per_mtok + c.completionTokens * price.completion_per_mtok) / 1e6;
  }
  return calls;
}

function agentPrice(spec: SweepSpec): PriceTable | undefined {
  return spec.backend.kind === 'surrogate' ? undefined : spec.backend.price;
}

function judgePrice(spec: SweepSpec): PriceTable | undefined {
  return spec.judge.kind === 'llm' && spec.judge.backend.kind !== 'surrogate' ? spec.judge.backend.price : undefined;
}
