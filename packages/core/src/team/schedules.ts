import type { TeamRole } from '../event.js';
import type { TeamControls } from '../protocol/control.js';
import { armOf } from '../protocol/registry.js';
import { debateCalls, debateEventCount, hubCalls, poolsTokens, relayCalls, type TeamCallPlan, type TeamRun } from './calls.js';

/**
 * The team schedules (docs/teams.md), one object each, in one table whose keys are the team values of a
 * spec's `dynamics`: its DAG of calls (calls.ts builds them), its event count, the `team` keys it reads, how
 * its members are named on a board, and what to do when its prompts outgrow the context. The arms each runs
 * are the protocols whose registry entry names it (protocol/registry.ts, `teams`).
 */
export interface TeamScheduleDef {
  /** The calls of a run, in event order (a topological order of its DAG). */
  calls(run: TeamRun): TeamCallPlan[];
  /** Events of a run (the length of `calls`, without building them). */
  events(run: TeamRun): number;
  /** The spec's `team` keys it reads (any other is refused on a sweep of only such schedules). */
  readonly keys: readonly (keyof TeamControls | 'token_budget' | 'budget_rule' | 'board_tokens')[];
  /** Shares `team.token_budget` over the chain (`budget_rule`: pooled, or floor(budget / N) each). */
  readonly splitsBudget?: boolean;
  /** Sweeps are its rounds (runs.parquet's sweeps_run); each round's solution is the team's answer then. */
  readonly rounds?: boolean;
  /** Without rounds: the role whose last call's reply is the team's answer (teams.parquet's one turn). */
  readonly answerRole?: TeamRole;
  /** How the board names member `author` of a team of `size`. */
  memberName(size: number): (author: number) => string;
  /** The fix when a call's prompt may not fit the model's context. */
  readonly contextFix: string;
}

const agentName = () => (a: number) => `agent ${a + 1}`;
const SMALLER = 'use a smaller team or max_tokens, or a model with a longer context';

export const TEAM_SCHEDULES = {
  relay: {
    calls: (run) => relayCalls(run.n, run.protocol, poolsTokens(run)),
    events: (run) => (armOf(run.protocol).observer ? 2 * run.n - 1 : run.n) + (armOf(run.protocol).demand ? (run.n - 1) * (run.n - 1) : 0),
    keys: ['token_budget', 'budget_rule', 'board_tokens', 'revisions'],
    splitsBudget: true,
    answerRole: 'relay',
    memberName: agentName,
    contextFix: SMALLER,
  },
  hub: {
    calls: (run) => hubCalls(run.n, run.protocol),
    events: (run) => (armOf(run.protocol).observer ? 2 * run.n + 3 : run.n + 2) + (armOf(run.protocol).demand ? run.n * (run.n - 1) : 0),
    keys: ['board_tokens', 'revisions'],
    answerRole: 'aggregator',
    memberName: (size) => (a) => (a >= size ? 'orchestrator' : `worker ${a + 1}`),
    contextFix: SMALLER,
  },
  debate: {
    calls: debateCalls,
    events: debateEventCount,
    keys: ['memory', 'solution', 'decision'],
    rounds: true,
    memberName: agentName,
    contextFix: 'use team: {memory: recent}, fewer turns or participants, a smaller max_tokens, or a model with a longer context',
  },
} as const satisfies Record<string, TeamScheduleDef>;

export type TeamDynamics = keyof typeof TEAM_SCHEDULES;

export function isTeamDynamics(dynamics: string): dynamics is TeamDynamics {
  return Object.hasOwn(TEAM_SCHEDULES, dynamics);
}

/** The schedule of a team dynamics (an error for a population's). */
export function teamSchedule(dynamics: string): TeamScheduleDef {
  if (!isTeamDynamics(dynamics)) throw new Error(`dynamics ${dynamics} is not a team schedule`);
  return TEAM_SCHEDULES[dynamics];
}

/** Events of a team run (the length of teamCalls, without building them). */
export function teamEventCount(run: TeamRun): number {
  return teamSchedule(run.dynamics).events(run);
}

/** The calls of a team run, in event order (a topological order of its DAG). */
export function teamCalls(run: TeamRun): TeamCallPlan[] {
  return teamSchedule(run.dynamics).calls(run);
}

/** A run whose schedule shares the token budget and whose rule is pool: each call's max_tokens is its poolShare. */
export function poolsBudget(run: Pick<TeamRun, 'dynamics' | 'controls'>): boolean {
  return isTeamDynamics(run.dynamics) && teamSchedule(run.dynamics).splitsBudget === true && poolsTokens(run);
}
