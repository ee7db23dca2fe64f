import type { TeamRole } from '../event.js';
import type { RunPlan } from '../plan.js';
import { CHARS_PER_TOKEN } from '../names.js';
import { armOf } from '../protocol/registry.js';
import { BOARD_HEADER, DEFAULT_BOARD_TOKENS, TABLE_HEADER } from '../protocol/board-render.js';
import { hiddenChars } from '../hidden-text.js';
import { keptReads } from './calls.js';
import { poolsBudget, teamCalls, teamSchedule } from './schedules.js';
import { poolShare } from './pool.js';
import { renderTeamCall } from './prompts.js';

/** What one role's calls of a team run cost (`panta plan`): a verbatim solution is counted, not called, so it has none. */
export interface TeamRoleCost {
  role: TeamRole;
  calls: number;
  /** Some of the calls are made only on a DRIFT verdict (feedback, regenerated turns) or a called debate (down's debaters). */
  atMost: boolean;
  promptTokens: number;
  completionTokens: number;
  /** The largest prompt of one of these calls (what the context must hold besides the reply). */
  largestPromptTokens: number;
}

/**
 * Completion tokens a team member may use: the relay's budget split over the chain (under budget_rule pool, the
 * even share each member may count on: what it may write is its poolShare), else the sweep's max_tokens.
 */
export function teamAnswerTokens(run: Pick<RunPlan, 'dynamics' | 'n' | 'controls'>, maxTokens: number): number {
  const budget = run.controls.team?.tokenBudget;
  return budget !== undefined && teamSchedule(run.dynamics).splitsBudget ? Math.max(1, Math.floor(budget / run.n)) : maxTokens;
}

/**
 * Each call's prompt rendered with every text it reads max_tokens long (the regenerated version of a turn
 * kept, the longer case), at CHARS_PER_TOKEN characters a token; every reply max_tokens long (a ceiling,
 * exact with fixed_length).
 */
export function teamCallCosts(run: RunPlan, maxTokens: number): TeamRoleCost[] {
  const answer = teamAnswerTokens(run, maxTokens);
  const filler = 'x'.repeat(answer * CHARS_PER_TOKEN);
  // A pooled relay budget: member j may write up to poolShare(B, N, j, 0) when those before it wrote nothing (what
  // a prompt quoting it must hold), and the chain writes at most B (the even shares, the rest to the last member).
  const pool = poolsBudget(run) ? run.controls.team!.tokenBudget! : undefined;
  const readFiller = (agent: number) => (pool === undefined ? filler : 'x'.repeat(poolShare(pool, run.n, agent, 0) * CHARS_PER_TOKEN));
  // Observer and extractor calls are not members: they keep the even share, outside the pool.
  const written = (call: { role: string; agent: number }) =>
    pool === undefined || call.role !== 'relay'
      ? answer
      : call.agent === run.n - 1
        ? pool - (run.n - 1) * Math.floor(pool / run.n)
        : Math.floor(pool / run.n);
  const byRole = new Map<string, TeamRoleCost>();
  // arm board (and table's belief table): a board filled up to its cap (the cap bounds its lines, not its header).
  const board =
    armOf(run.protocol).board === 'shown' || armOf(run.protocol).observer === 'table'
      ? [
          armOf(run.protocol).observer === 'table' ? TABLE_HEADER : BOARD_HEADER,
          'x'.repeat((run.controls.team?.boardTokens ?? DEFAULT_BOARD_TOKENS) * CHARS_PER_TOKEN),
        ]
      : undefined;
  // A member's persona (and briefing) from the population: the longest one, counted rather than rendered.
  const hidden = Math.ceil(hiddenChars(run) / CHARS_PER_TOKEN);
  // down: every reply a debate may follow calls one (the longer case: the debate shown to its reader).
  const motion = (kind: string, text: string) =>
    armOf(run.protocol).demand === 'debate' && (kind === 'note' || kind === 'report' || kind === 'motion') ? `DEBATE: ${text}` : text;
  for (const call of teamCalls(run)) {
    if (call.role === 'solution' && run.controls.team?.solution !== 'extracted') continue;
    if (call.role === 'drift-judge' && armOf(run.protocol).judge === 'gold') continue; // the gold's verdict, no call
    const reads = keptReads(
      call.reads,
      call.reads.map((r) => (r.kind === 'verdict' ? 'DRIFT: lack of progress.' : motion(r.kind, readFiller(r.agent)))),
      () => true,
    );
    const revisions = run.controls.team?.revisions;
    const m = renderTeamCall({
      call,
      size: run.n,
      rounds: run.sweeps,
      question: run.prompt.question,
      reads,
      arm: run.protocol,
      board,
      ...(revisions ? { revisions } : {}),
      dynamics: run.dynamics,
    });
    const c = byRole.get(call.role) ?? {
      role: call.role,
      calls: 0,
      atMost: false,
      promptTokens: 0,
      completionTokens: 0,
      largestPromptTokens: 0,
    };
    // Members carry their persona; an observer or extractor reads a member's reply without it.
    const member = call.agent < run.n && call.role !== 'observer' && call.role !== 'extractor';
    const prompt = Math.ceil(m.system.length / CHARS_PER_TOKEN) + Math.ceil(m.user.length / CHARS_PER_TOKEN) + (member ? hidden : 0);
    c.calls++;
    c.atMost ||= call.onDriftOf !== undefined || call.onDemandOf !== undefined;
    c.promptTokens += prompt;
    c.largestPromptTokens = Math.max(c.largestPromptTokens, prompt);
    c.completionTokens += written(call);
    byRole.set(call.role, c);
  }
  return [...byRole.values()];
}
