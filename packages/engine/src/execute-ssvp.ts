import {
  decodeSummaryVersion,
  divergence,
  encodeSummaryVersion,
  mergeNote,
  protocolOf,
  temperatureAt,
  withBroadcast,
  type ContextItem,
  type PromptContext,
} from '@panta/core';
import { agentPersona, answer, callModel, callOutcome, callSeed, controlEncoder, type WorkerServices } from './execute-call.js';
import type { CallOutcome, EventOutcome, EventTask } from './task.js';

/**
 * The worker's half of an event of a summary protocol (no-sync, ssvp, full-broadcast; core/protocol/ssvp.ts):
 * 1. ContextSummary: the agent summarizes its timestamped context (its own latest answer and the answers it
 *    reads, each with the round it was written in): a `summary` row;
 * 2. from sweep 1, the CDS of each pair (agent, neighbour): the cosine distance of the raw embeddings of
 *    the agent's new summary and the neighbour's latest one (carried in the neighbour's version, so in the
 *    read set); the agent row's `divergence` is the largest (what would trigger a merge);
 * 3. ssvp only: a ContextMerge call per neighbour above tau, in neighbour order (a `merge` row each, its
 *    `divergence` that pair's CDS); the agent then reads that neighbour through the merge's review;
 * 4. the agent's update, as glauber's (full-broadcast: its read set is every other agent).
 * The event's version is its answer with its summary. Every call's seed derives from the event's.
 */
export async function executeSummaryEvent(task: EventTask, reads: readonly string[], services: WorkerServices): Promise<EventOutcome> {
  const { run, plan } = task;
  const temperature = temperatureAt(run.temperature, plan.sweep, run.sweeps, run.controls.annealing);
  let persona = agentPersona(run, plan.agent);
  // full-broadcast shares each teammate's briefing from the first exchange on (core/src/briefing.ts).
  if (persona && protocolOf(run.protocol).reads === 'everyone' && plan.sweep >= 1 && run.prompt.briefings) {
    const teammates = Array.from(plan.neighbours, (agent) => ({ agent, entryId: agentPersona(run, agent)?.id ?? '' }));
    persona = { ...persona, text: withBroadcast(persona.text, run.prompt, teammates) };
  }
  const initial = plan.readVersions.length === 0;
  const own = initial ? undefined : decodeSummaryVersion(reads[0]);
  const theirs = reads.slice(1).map(decodeSummaryVersion);
  const roundOf = (version: number) => Math.floor(version / run.n);
  const items: ContextItem[] = [];
  if (own) items.push({ round: roundOf(plan.readVersions[0]), agent: -1, text: own.answer });
  theirs.forEach((v, i) => items.push({ round: roundOf(plan.readVersions[i + 1]), agent: plan.neighbours[i], text: v.answer }));

  // The agent's update (no kind) or one of its protocol calls, which also see the timestamped context.
  const base = (kind?: 'summary' | 'context-merge'): PromptContext => {
    const ctx: PromptContext = {
      question: run.prompt.question,
      sweep: plan.sweep,
      temperature,
      previous: own?.answer,
      neighbourAgents: plan.neighbours,
      neighbourAnswers: theirs.map((v) => v.answer),
    };
    if (kind) {
      ctx.kind = kind;
      ctx.context = items;
    }
    if (persona) {
      ctx.persona = persona.text;
      if (persona.belief) ctx.belief = persona.belief;
    }
    return ctx;
  };

  const before: CallOutcome[] = [];
  const summarySeed = callSeed(plan.seed, 'summary');
  const summaryCall = await callModel(services, base('summary'), summarySeed, temperature, task.depth);
  before.push(callOutcome('summary', summarySeed, summaryCall));
  const summary = summaryCall.result.text;

  const context = base();
  let gate: number | undefined;
  if (!initial && theirs.length > 0) {
    const [mine, ...others] = await controlEncoder(run, services).encode([summary, ...theirs.map((v) => v.summary)]);
    const cds = others.map((o) => divergence(mine!, [o]));
    gate = Math.max(...cds);
    if (protocolOf(run.protocol).calls.includes('merge')) {
      const answers = [...context.neighbourAnswers];
      for (let i = 0; i < cds.length; i++) {
        if (cds[i] <= run.controls.tau) continue;
        const agent = plan.neighbours[i];
        const seed = callSeed(plan.seed, `merge-${agent}`);
        const merge = base('context-merge');
        merge.incoming = { agent, round: roundOf(plan.readVersions[i + 1]), summary: theirs[i].summary };
        const call = await callModel(services, merge, seed, temperature, task.depth);
        const row = callOutcome('merge', seed, call);
        row.divergence = cds[i];
        before.push(row);
        answers[i] = mergeNote(call.result.text.replace(/\s+/g, ' ').trim());
      }
      context.neighbourAnswers = answers;
    }
  }
  const call = await callModel(services, context, plan.seed, temperature, task.depth);
  const outcome = await answer(task, services, call.result, call.latencyMs, undefined);
  outcome.before = before;
  if (gate !== undefined) outcome.divergence = gate;
  outcome.version = encodeSummaryVersion({ answer: outcome.response, summary });
  return outcome;
}
