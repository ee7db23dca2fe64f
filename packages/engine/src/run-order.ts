import { criticalPath, runEvents, TeamSchedule, type RunPlan } from '@panta/core';

/**
 * The order runs open in: longest chain of dependent events first (stable otherwise). A run's events can
 * run at most about N / (k + 1) at a time under asynchronous updates (an event waits for its neighbours'
 * latest answers), so a full mean field is one chain of (sweeps + 1) N events while a ring of the same N
 * runs a third of its agents at once. Opened last, the chains ran alone at the end of a sweep with the
 * machine mostly idle (quickstart: its 12 mean fields of 729); opened first, they run beside everything
 * else. Results never depend on this order: each run is a function of its own seed.
 */
export function chainsFirst(runs: readonly RunPlan[]): RunPlan[] {
  const depth = (run: RunPlan) => runEvents(run) / parallelism(run);
  return runs
    .map((run, i) => ({ run, i, d: depth(run) }))
    .sort((a, b) => b.d - a.d || a.i - b.i)
    .map((x) => x.run);
}

/** Events of a run that can be in flight at once, about: 1 for a full mean field under asynchronous updates (a chain). */
export function parallelism(run: RunPlan): number {
  // A team's DAG is a few dozen calls: its parallelism is exact (a relay is one chain).
  if (run.controls.team) {
    const { events, criticalPath: path } = criticalPath(new TeamSchedule(run));
    return Math.max(1, Math.floor(events / path));
  }
  return run.dynamics === 'synchronous' ? run.n : Math.max(1, Math.floor(run.n / (run.k + 1)));
}

/**
 * Events a run's planner plans ahead (its window): the spec's lookahead, or for a chain CHAIN_WINDOW. A chain
 * has one event in flight, so planning further only holds plans (8 B per read: 5.8 KB an event of a mean field
 * of 729, and its planner plans up to 2^20 reads ahead: 8 MiB), which a run per slot would multiply.
 */
export function plannerWindow(run: RunPlan, lookahead: number): number {
  return parallelism(run) > 1 ? lookahead : Math.min(lookahead, CHAIN_WINDOW);
}

/** A chain's window: its next events are planned well before the reply they wait for arrives. */
export const CHAIN_WINDOW = 64;
