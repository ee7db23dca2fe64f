import { decodeBoardVersion, isBoardProtocol, isSummaryProtocol, renderEntries, temperatureAt, type PromptContext } from '@panta/core';
import { agentPersona, answer, runServices, timedCall, type WorkerServices } from './execute-call.js';
import { executeSummaryEvent } from './execute-ssvp.js';
import { executeTeamEvent } from './execute-team.js';
import type { EventOutcome, EventTask } from './task.js';

export {
  agentPersona,
  answer,
  callModel,
  callOutcome,
  callSeed,
  controlEncoder,
  runServices,
  type WorkerServices,
} from './execute-call.js';

/**
 * The worker's half of an event: build the prompt from the versions it reads (own previous answer first,
 * then neighbours in prompt order) as the run's protocol says, call the model, embed the answer.
 * - glauber, isolated: the template with the neighbours' answers (isolated reads none);
 * - no-sync, ssvp, full-broadcast: summaries, CDS and ContextMerge calls (execute-ssvp.ts);
 * - belief-board: versions carry live board entries, which the agent reads instead of answers; its reply
 *   (JSON) gives its answer and new entries;
 * - drift-policy: the template, plus the sweep's moderator message when there is one.
 */
export function executeEvent(task: EventTask, reads: readonly string[], sweepServices: WorkerServices): Promise<EventOutcome> {
  const { run, plan } = task;
  const services = runServices(run, sweepServices);
  if (run.controls.team) return executeTeamEvent(task, reads, services);
  if (isSummaryProtocol(run.protocol)) return executeSummaryEvent(task, reads, services);
  const temperature = temperatureAt(run.temperature, plan.sweep, run.sweeps, run.controls.annealing);
  const boardRun = isBoardProtocol(run.protocol);
  const own = boardRun && plan.readVersions.length > 0 ? decodeBoardVersion(reads[0]) : undefined;
  const previous = plan.readVersions.length > 0 ? (own?.answer ?? reads[0]) : undefined;
  const neighbourAnswers = boardRun ? reads.slice(1).map((v) => renderEntries(decodeBoardVersion(v).entries)) : reads.slice(1);
  const persona = agentPersona(run, plan.agent);
  // Optional fields are set one by one: spreads of conditional objects cost an allocation each, per event.
  const context: PromptContext = {
    question: run.prompt.question,
    sweep: plan.sweep,
    temperature,
    previous,
    neighbourAgents: plan.neighbours,
    neighbourAnswers,
  };
  if (persona) {
    context.persona = persona.text;
    if (persona.belief) context.belief = persona.belief;
  }
  if (boardRun) context.board = true;
  if (task.moderator) context.moderator = task.moderator;
  // The common path chains promises instead of awaiting: an async function per event keeps its whole frame
  // on the heap across the call, which was the largest allocation per event.
  return timedCall(
    services,
    context,
    plan.seed,
    temperature,
    (result, latencyMs) => answer(task, services, result, latencyMs, own?.entries),
    task.depth,
  );
}
