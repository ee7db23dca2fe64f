import { eventSeed, type EventPlan, type EventStream } from '../schedule.js';
import type { TeamCallPlan, TeamRun } from './calls.js';
import { teamCalls } from './schedules.js';

/**
 * A team run's schedule as the planner reads it (docs/teams.md): its calls in event order, each reading
 * the versions its TeamCallPlan names. Every event writes a version of its own (slot = event), so no version
 * is ever superseded: a team holds a few dozen versions, all of which a later call may read.
 */
export class TeamSchedule implements EventStream {
  readonly total: number;
  readonly slots: number;
  private readonly calls: TeamCallPlan[];
  private cursor = 0;

  constructor(readonly run: TeamRun & { seed: number }) {
    this.calls = teamCalls(run);
    this.total = this.calls.length;
    this.slots = this.total;
  }

  get position(): number {
    return this.cursor;
  }

  /** The call of an event (what the worker builds its prompt from). */
  call(event: number): TeamCallPlan {
    return this.calls[event];
  }

  liveVersions(): Float64Array {
    const live = new Float64Array(this.slots).fill(-1);
    for (let e = 0; e < this.cursor; e++) live[e] = e;
    return live;
  }

  next(): EventPlan | null {
    const j = this.cursor;
    if (j >= this.total) return null;
    this.cursor++;
    const call = this.calls[j];
    return {
      event: j,
      sweep: call.sweep,
      agent: call.agent,
      neighbours: Int32Array.from(call.reads, (r) => r.agent),
      readVersions: Int32Array.from(call.reads, (r) => r.event),
      seed: eventSeed(this.run.seed, j),
      slot: j,
    };
  }

  skip(count: number): void {
    for (let i = 0; i < count && this.next(); i++);
  }
}
