import { graphFor, type EdgeLists, type RunPlan } from '../plan.js';
import { Schedule, type EventStream } from '../schedule.js';
import { isTeamDynamics } from './schedules.js';
import { TeamSchedule } from './schedule.js';

/** A run's schedule: a team's DAG of calls, or a population's picks on its graph. */
export function scheduleFor(run: RunPlan, edgeLists: EdgeLists): EventStream {
  if (isTeamDynamics(run.dynamics)) return new TeamSchedule(run);
  return new Schedule(run, graphFor(run.geometry, run.n, run.seed, edgeLists));
}
