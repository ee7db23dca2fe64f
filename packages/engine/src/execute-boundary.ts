import {
  decodeBoardVersion,
  decodeSummaryVersion,
  hasBoundaries,
  isBoardProtocol,
  isSummaryProtocol,
  protocolOf,
  isDrift,
  medoid,
  nextControl,
  type ControlState,
  type Tag,
} from '@panta/core';
import { callModel, callOutcome, callSeed, controlEncoder, runServices, type WorkerServices } from './execute-call.js';
import type { BoundaryOutcome, BoundaryTask, CallOutcome } from './task.js';

/**
 * The worker's half of a sweep boundary: measure the snapshot (control magnetisation and rho), decide
 * whether the run stops (early stopping), and for drift-policy let a judge compare the majority answer with
 * the previous sweep's and, on drift, a moderator write the next sweep's message. Pure in the snapshot and
 * the seeds, so it decides the same on every execution.
 */
export async function executeBoundary(
  task: BoundaryTask,
  values: readonly string[],
  sweepServices: WorkerServices,
): Promise<BoundaryOutcome> {
  const { run, sweep } = task;
  const services = runServices(run, sweepServices);
  if (!hasBoundaries(run.protocol, run.controls)) throw new Error(`${run.runId}: boundary task for a run without boundaries`);
  const answers = isBoardProtocol(run.protocol)
    ? values.map((v) => decodeBoardVersion(v).answer)
    : isSummaryProtocol(run.protocol)
      ? values.map((v) => decodeSummaryVersion(v).answer)
      : [...values];
  const embeddings = await controlEncoder(run, services).encode(answers);
  const rule = run.controls.earlyStopping;
  let tags: Tag[] = answers.map(() => 'not_known');
  if (rule) {
    const judge = services.judge;
    if (!judge) throw new Error('early stopping needs a judge in the worker');
    tags = await Promise.all(answers.map((a) => judge.judge(run.prompt, a)));
  }
  const previous = task.state;
  const state: ControlState = nextControl(previous, sweep, embeddings, tags, rule, run.sweeps);
  const calls: CallOutcome[] = [];
  if (protocolOf(run.protocol).boundaries && !state.stop) {
    const majority = medoid(answers, embeddings);
    state.majority = majority;
    if (sweep >= 1 && previous?.majority !== undefined) {
      const base = {
        question: run.prompt.question,
        sweep,
        temperature: run.temperature,
        neighbourAgents: [],
        neighbourAnswers: [],
        before: previous.majority,
        after: majority,
      };
      // A boundary call's seed: the run's, mixed with the sweep and the role (the same on every execution).
      const eventSeed = callSeed(run.seed, `boundary-${sweep}`);
      const judgeSeed = callSeed(eventSeed, 'judge');
      const verdict = await callModel(services, { ...base, kind: 'drift-judge' }, judgeSeed, 0);
      calls.push(callOutcome('judge', judgeSeed, verdict));
      if (isDrift(verdict.result.text)) {
        const moderatorSeed = callSeed(eventSeed, 'moderator');
        const message = await callModel(services, { ...base, kind: 'moderator' }, moderatorSeed, run.temperature);
        calls.push(callOutcome('moderator', moderatorSeed, message));
        state.moderator = message.result.text.replace(/\s+/g, ' ').trim();
      }
    }
  }
  return { runId: run.runId, sweep, state, calls };
}
