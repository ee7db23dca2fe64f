import type { TeamRole } from '../event.js';
import type { TeamControls } from '../protocol/control.js';
import type { Dynamics } from '../spec/schema.js';
import { armOf } from '../protocol/registry.js';

/**
 * Team schedules (docs/teams.md): relay, hub and debate as DAGs of calls whose read sets are fixed before
 * anything runs. A DRIFTJudge verdict never changes the DAG: the calls it may call for (DRIFTPolicy's
 * feedback, a regenerated turn) are planned, read the verdict, and are skipped when it finds no drift; the
 * calls after them read both versions of a turn and the verdict, and keep the version it chose. So every
 * execution, at any concurrency, before or after a crash, reads the same versions.
 */
/** What a read version is to the call reading it. */
export type TeamReadKind =
  | 'note'
  | 'decomposition'
  | 'report'
  | 'personas'
  | 'contribution'
  | 'draft'
  | 'feedback'
  | 'vote'
  | 'verdict'
  | 'solution'
  /** board arms: an earlier relay call read for its board entries only; full: for its whole output. */
  | 'board'
  | 'output'
  /** observer arms: the member's whole reply, as its observer reads it at the hand-off. */
  | 'trace'
  /** table: an observer call read for its ledger entries (the belief table); extract: for its extraction. */
  | 'table'
  | 'extract'
  /** down (debate on demand): a debater reads the caller's reply for its motion; the reader of the debate its arguments. */
  | 'motion'
  | 'argument'
  /** a pooled token budget: an earlier relay member read for the completion tokens it spent only. */
  | 'spent';

export interface TeamRead {
  event: number;
  /** The member that wrote it (the row's `neighbours` entry). */
  agent: number;
  kind: TeamReadKind;
  /** The turn (debate) or step it belongs to. */
  turn: number;
  /**
   * regenerate: a turn t >= 2 exists in two versions; the reader keeps the regenerated one when the verdict
   * of turn t (also read) says drift, else the original. Absent: the read is always kept.
   */
  variant?: 'original' | 'regenerated';
  /** An `argument`: the member that called the debate it belongs to. */
  of?: number;
}

export interface TeamCallPlan {
  event: number;
  role: TeamRole;
  sweep: number;
  agent: number;
  reads: TeamRead[];
  /** The verdict event that decides whether this call is made (made on drift, else skipped). */
  onDriftOf?: number;
  /** down: the event whose reply decides whether this debate call is made (made when it calls a debate, else skipped). */
  onDemandOf?: number;
}

/** What a team schedule depends on: the spec's settings as a run carries them. */
export interface TeamRun {
  n: number;
  sweeps: number;
  dynamics: Dynamics;
  protocol: string;
  controls: { team?: TeamControls };
}

function debateShape(run: TeamRun): { generated: boolean; policy: boolean; regenerate: boolean; votes: boolean } {
  return {
    votes: run.controls.team?.decision !== 'consensus',
    generated: run.controls.team?.personas !== 'population',
    policy: armOf(run.protocol).debate === 'policy',
    regenerate: armOf(run.protocol).debate === 'regenerate',
  };
}

/** Events of a debate run (the length of debateCalls, without building them). */
export function debateEventCount(run: TeamRun): number {
  const n = run.n;
  const r = run.sweeps;
  const { generated, policy, regenerate, votes } = debateShape(run);
  const turn = (votes ? 2 : 1) * n + 1;
  return (generated ? 1 : 0) + r * turn + (r - 1) + (policy ? Math.max(0, r - 2) : 0) + (regenerate ? (r - 1) * turn : 0);
}

/** A relay run whose token budget is pooled over the chain (team.budget_rule pool): its members read what the earlier ones spent. */
export function poolsTokens(run: Pick<TeamRun, 'controls'>): boolean {
  return run.controls.team?.tokenBudget !== undefined && run.controls.team.budgetRule === 'pool';
}

/**
 * A relay member reads its predecessor's note; in the board arms also every earlier call (for the entries
 * on the board), in `full` every earlier call's whole output. In the observer arms (`table`, `extract`) an
 * observer call follows each member whose note someone reads (all but the last): it reads the member's whole
 * reply (its trace) and, in `table`, the earlier observers' ledger entries it may revise; every later member
 * reads every earlier observer call besides the note. In `down` (debate on demand) the debate a member may
 * call follows it; the next member reads its arguments besides the note. With a pooled token budget a member reads every earlier
 * member at least for the tokens it spent (`spent`), which its share of the pool depends on.
 */
export function relayCalls(n: number, protocol: string, pooled = false): TeamCallPlan[] {
  const calls: TeamCallPlan[] = [];
  const arm = armOf(protocol);
  const earlier: TeamReadKind | undefined = arm.board !== undefined ? 'board' : (arm.earlier ?? (pooled ? 'spent' : undefined));
  const observed: TeamRead[] = [];
  const members: number[] = [];
  let debate: TeamRead[] = [];
  for (let i = 0; i < n; i++) {
    const reads: TeamRead[] = [...observed];
    const member = calls.length;
    if (earlier) for (let j = 0; j < i - 1; j++) reads.push({ event: members[j], agent: j, kind: earlier, turn: j });
    if (i > 0) reads.push({ event: members[i - 1], agent: i - 1, kind: 'note', turn: i - 1 }, ...debate);
    calls.push({ event: member, role: 'relay', sweep: i, agent: i, reads });
    members.push(member);
    if (arm.demand === 'debate' && i < n - 1) debate = debateAfter(calls, calls[member], others(n, i));
    if (arm.observer && i < n - 1) {
      const trace: TeamRead = { event: member, agent: i, kind: 'trace', turn: i };
      const ledger = arm.observer === 'table' ? observed : [];
      calls.push({ event: calls.length, role: roleOfObserver(arm.observer), sweep: i, agent: i, reads: [...ledger, trace] });
      observed.push({ event: calls.length - 1, agent: i, kind: arm.observer, turn: i });
    }
  }
  return calls;
}

/** The members of a team of n other than `caller`, in order: a debate's participants. */
function others(n: number, caller: number): number[] {
  return Array.from({ length: n }, (_, j) => j).filter((j) => j !== caller);
}

/**
 * down: the debate a member may call at its hand-off, planned after it: each participant in turn argues the
 * caller's motion (reading the caller's reply and the arguments before its own), made only when the caller's
 * reply calls a debate. Returns the arguments, as the debate's reader reads them.
 */
function debateAfter(calls: TeamCallPlan[], caller: TeamCallPlan, participants: readonly number[]): TeamRead[] {
  const motion: TeamRead = { event: caller.event, agent: caller.agent, kind: 'motion', turn: caller.sweep };
  const args: TeamRead[] = [];
  for (const j of participants) {
    const event = calls.length;
    calls.push({ event, role: 'debater', sweep: caller.sweep, agent: j, reads: [motion, ...args], onDemandOf: caller.event });
    args.push({ event, agent: j, kind: 'argument', turn: caller.sweep, of: caller.agent });
  }
  return args;
}

function roleOfObserver(observer: 'table' | 'extract'): TeamRole {
  return observer === 'table' ? 'observer' : 'extractor';
}

/**
 * A hub: the orchestrator's decomposition, N workers each reading it, the aggregator reading the plan and
 * every report. In the observer arms an observer call follows the orchestrator (workers read it with the
 * plan) and each worker (the aggregator reads them all), as in the relay. In `down` each worker may call a
 * debate among the other workers; the aggregator reads every argument.
 */
export function hubCalls(n: number, protocol: string): TeamCallPlan[] {
  const observer = armOf(protocol).observer;
  const plan: TeamRead = { event: 0, agent: n, kind: 'decomposition', turn: 0 };
  const calls: TeamCallPlan[] = [{ event: 0, role: 'orchestrator', sweep: 0, agent: n, reads: [] }];
  const observed: TeamRead[] = [];
  const observe = (of: TeamCallPlan, ledger: readonly TeamRead[]): TeamRead => {
    const trace: TeamRead = { event: of.event, agent: of.agent, kind: 'trace', turn: of.sweep };
    const event = calls.length;
    calls.push({
      event,
      role: roleOfObserver(observer!),
      sweep: of.sweep,
      agent: of.agent,
      reads: [...(observer === 'table' ? ledger : []), trace],
    });
    return { event, agent: of.agent, kind: observer!, turn: of.sweep };
  };
  if (observer) observed.push(observe(calls[0], []));
  const first = calls.length;
  for (let i = 0; i < n; i++) calls.push({ event: first + i, role: 'worker', sweep: 1, agent: i, reads: [plan, ...observed] });
  const reports: TeamRead[] = [];
  for (let i = 0; i < n; i++) reports.push({ event: first + i, agent: i, kind: 'report', turn: 1 });
  if (observer) {
    const ofPlan = [...observed];
    for (let i = 0; i < n; i++) observed.push(observe(calls[first + i], ofPlan));
  }
  const debates: TeamRead[] = [];
  if (armOf(protocol).demand === 'debate') for (let i = 0; i < n; i++) debates.push(...debateAfter(calls, calls[first + i], others(n, i)));
  calls.push({ event: calls.length, role: 'aggregator', sweep: 2, agent: n, reads: [plan, ...reports, ...observed, ...debates] });
  return calls;
}

/** One version of a debate turn: its contributions, votes and solution (event indices). */
interface TurnEvents {
  contributions: number[];
  votes: number[];
  solution: number;
}

export function debateCalls(run: TeamRun): TeamCallPlan[] {
  const p = run.n;
  const rounds = run.sweeps;
  const memory = run.controls.team?.memory ?? 'all';
  const { generated, policy, regenerate, votes: voting } = debateShape(run);
  const calls: TeamCallPlan[] = [];
  const add = (call: Omit<TeamCallPlan, 'event'>): number => {
    calls.push({ event: calls.length, ...call });
    return calls.length - 1;
  };
  const personas: TeamRead[] = generated
    ? [{ event: add({ role: 'persona-gen', sweep: 0, agent: p, reads: [] }), agent: p, kind: 'personas', turn: 0 }]
    : [];
  const original: TurnEvents[] = [];
  const regenerated: (TurnEvents | undefined)[] = [];
  const verdicts: number[] = [];
  const feedback: number[] = [];

  /** A turn's contributions (or its solution) as a later call reads them: both versions and the verdict when regenerated. */
  const turnReads = (t: number, kind: 'contribution' | 'draft'): TeamRead[] => {
    const o = original[t];
    const g = regenerated[t];
    const pick = (v: TurnEvents): number[] => (kind === 'draft' ? [v.solution] : v.contributions);
    const agents = (v: TurnEvents): number[] => pick(v).map((e, i) => (kind === 'draft' ? calls[e].agent : i));
    const version = (v: TurnEvents, variant?: TeamRead['variant']): TeamRead[] =>
      pick(v).map((event, i) => ({ event, agent: agents(v)[i], kind, turn: t, ...(variant ? { variant } : {}) }));
    if (!g) return version(o);
    return [{ event: verdicts[t], agent: p, kind: 'verdict', turn: t }, ...version(o, 'original'), ...version(g, 'regenerated')];
  };

  const turn = (t: number, onDriftOf?: number): TurnEvents => {
    const cond: TeamRead[] = onDriftOf === undefined ? [] : [{ event: onDriftOf, agent: p, kind: 'verdict', turn: t }];
    const when = onDriftOf === undefined ? {} : { onDriftOf };
    const history: TeamRead[] = [];
    for (let u = memory === 'all' ? 1 : Math.max(1, t - 1); u < t; u++) history.push(...turnReads(u, 'contribution'));
    if (t >= 2) {
      // The draft: the previous turn's solution (its verdict is read with the history already).
      history.push(...turnReads(t - 1, 'draft').filter((r) => r.kind !== 'verdict'));
      if (feedback[t - 1] !== undefined) history.push({ event: feedback[t - 1], agent: p + 1, kind: 'feedback', turn: t - 1 });
    }
    const contributions: number[] = [];
    for (let a = 0; a < p; a++) {
      const current = contributions.map((event, i): TeamRead => ({ event, agent: i, kind: 'contribution', turn: t }));
      contributions.push(add({ role: 'persona', sweep: t, agent: a, reads: [...cond, ...personas, ...history, ...current], ...when }));
    }
    const proposals = contributions.map((event, i): TeamRead => ({ event, agent: i, kind: 'contribution', turn: t }));
    const votes: number[] = [];
    if (voting)
      for (let a = 0; a < p; a++)
        votes.push(add({ role: 'vote', sweep: t, agent: a, reads: [...cond, ...personas, ...proposals], ...when }));
    const ballots = votes.map((event, i): TeamRead => ({ event, agent: i, kind: 'vote', turn: t }));
    const solution = add({ role: 'solution', sweep: t, agent: p, reads: [...cond, ...ballots, ...proposals], ...when });
    return { contributions, votes, solution };
  };

  for (let t = 1; t <= rounds; t++) {
    original[t] = turn(t);
    if (t < 2) continue;
    const previous = turnReads(t - 1, 'draft');
    const after: TeamRead = { event: original[t].solution, agent: p, kind: 'solution', turn: t };
    verdicts[t] = add({ role: 'drift-judge', sweep: t, agent: p, reads: [...previous, after] });
    if (policy && t <= rounds - 1) {
      const reads: TeamRead[] = [
        { event: verdicts[t], agent: p, kind: 'verdict', turn: t },
        ...original[t].contributions.map((event, i): TeamRead => ({ event, agent: i, kind: 'contribution', turn: t })),
        after,
      ];
      feedback[t] = add({ role: 'feedback', sweep: t, agent: p + 1, reads, onDriftOf: verdicts[t] });
    }
    if (regenerate) regenerated[t] = turn(t, verdicts[t]);
  }
  return calls;
}

/**
 * The reads a call keeps once the verdicts it read are known: of a regenerated turn, the regenerated
 * version on drift, else the original; verdicts themselves are kept.
 */
export function keptReads<T>(
  reads: readonly TeamRead[],
  texts: readonly T[],
  isDriftAt: (turn: number) => boolean,
): { read: TeamRead; text: T }[] {
  const out: { read: TeamRead; text: T }[] = [];
  reads.forEach((read, i) => {
    if (read.variant !== undefined && (read.variant === 'regenerated') !== isDriftAt(read.turn)) return;
    out.push({ read, text: texts[i] });
  });
  return out;
}
