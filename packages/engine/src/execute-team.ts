import { performance } from 'node:perf_hooks';
import {
  armOf,
  callsDebate,
  decodeSpentVersion,
  DEFAULT_PROTOCOL,
  encodeSpentVersion,
  goldVerdictOf,
  isDrift,
  keptReads,
  poolShare,
  poolsBudget,
  solutionWinner,
  renderTeamCall,
  teamAnswerTokens,
  teamCalls,
  keepsBoard,
  type ChatMessages,
  type RunPlan,
  type TeamCallPlan,
} from '@panta/core';
import type { Encoder } from '@panta/embed';
import type { ChatRequest, ChatResult } from '@panta/llm';
import { boardOfCall } from './execute-team-board.js';
import { agentPersona, type WorkerServices } from './execute-call.js';
import type { EventOutcome, EventTask } from './task.js';

/**
 * Each open team run's calls (a few dozen), built once per run object rather than per event. Keyed by the
 * plan itself, not its id: two sweeps in one process may share run ids with other turns or arms.
 */
const plans = new WeakMap<RunPlan, TeamCallPlan[]>();

function callsOf(run: RunPlan): TeamCallPlan[] {
  let calls = plans.get(run);
  if (!calls) plans.set(run, (calls = teamCalls(run)));
  return calls;
}

/** A team call's request: fixed messages, no population context (the surrogate reads the text, as a server does). */
class TeamRequest implements ChatRequest {
  constructor(
    private readonly rendered: ChatMessages,
    readonly seed: number,
    readonly temperature: number,
    readonly maxTokens: number,
    readonly fixedLength: boolean,
  ) {}

  messages(): ChatMessages {
    return this.rendered;
  }

  promptLength(): { system: number; user: number } {
    return { system: this.rendered.system.length, user: this.rendered.user.length };
  }
}

/**
 * The worker's half of a team event (docs/teams.md): the call's kept reads (a regenerated turn's version
 * the verdict chose), its prompt, the model's reply, embedded like an answer. A call that waits on a
 * verdict of no drift is skipped; arm drift-policy-gold's verdict is the gold's, with no call; a `solution` is the plurality of the turn's votes: the winning contribution,
 * verbatim with no call, or (team.solution extracted) what the extraction call takes out of it.
 */
export async function executeTeamEvent(task: EventTask, versions: readonly string[], services: WorkerServices): Promise<EventOutcome> {
  const { run, plan } = task;
  const call = callsOf(run)[plan.event];
  if (!call || call.event !== plan.event) throw new Error(`${run.runId}: event ${plan.event} is not in its team schedule`);
  const pooled = poolsBudget(run);
  const { reads, spent } = pooled ? pooledReads(run, call, versions) : { reads: versions, spent: 0 };
  const drift = new Map<number, boolean>();
  call.reads.forEach((r, i) => {
    if (r.kind === 'verdict') drift.set(r.turn, isDrift(reads[i]));
  });
  const base = { runId: run.runId, event: plan.event, role: call.role, embeddings: {}, createdAt: Date.now(), latencyMs: 0 };
  // down: a debater's call is made only when the reply it reads for its motion calls a debate.
  const motion = call.reads.findIndex((r) => r.kind === 'motion');
  const undemanded = call.onDemandOf !== undefined && !(motion >= 0 && callsDebate(reads[motion]));
  if ((call.onDriftOf !== undefined && !drift.get(call.sweep)) || undemanded) {
    return embed(
      { ...base, response: '', finishReason: 'skipped', replyStatus: 'skipped', promptTokens: 0, completionTokens: 0, calls: 0 },
      services,
    );
  }
  const kept = keptReads(call.reads, reads, (turn) => drift.get(turn) ?? false);
  if (call.role === 'drift-judge' && armOf(run.protocol).judge === 'gold') {
    // drift-policy-gold: the verdict is the gold's, with no call (the policy without the judge).
    const response = goldVerdictOf(run.prompt, kept);
    return embed({ ...base, temperature: 0, response, finishReason: 'stop', promptTokens: 0, completionTokens: 0, calls: 0 }, services);
  }
  let reading = kept;
  let winner: number | undefined;
  if (call.role === 'solution') {
    winner = solutionWinner(run, kept, plan.seed);
    const proposal = kept.filter((k) => k.read.kind === 'contribution' && k.read.agent === winner);
    if (run.controls.team?.solution !== 'extracted') {
      const text = proposal[0]?.text ?? '';
      const counted = { temperature: 0, response: text, finishReason: 'stop', promptTokens: 0, completionTokens: 0, calls: 0 };
      return embed({ ...base, agent: winner, ...counted }, services);
    }
    reading = proposal; // extracted: the winning contribution is what the extraction call reads
  }
  const observing = call.role === 'observer' || call.role === 'extractor';
  const board = keepsBoard(run.protocol) ? boardOfCall(run, call, reads) : undefined;
  const messages = teamMessages(run, call, reading, observing, board?.shown.lines);
  // The judge, the extraction and the observers read, rather than contribute: at temperature 0.
  const temperature = call.role === 'drift-judge' || call.role === 'solution' || observing ? 0 : run.temperature;
  const started = performance.now();
  const result: ChatResult = await services.backend.complete(
    new TeamRequest(
      messages,
      plan.seed,
      temperature,
      pooled && call.role === 'relay'
        ? poolShare(run.controls.team!.tokenBudget!, run.n, call.agent, spent)
        : teamAnswerTokens(run, services.maxTokens),
      services.fixedLength,
    ),
  );
  const outcome: EventOutcome = {
    ...base,
    ...(winner !== undefined ? { agent: winner } : {}),
    temperature,
    response: result.text,
    finishReason: result.finishReason,
    promptTokens: result.promptTokens,
    completionTokens: result.completionTokens,
    latencyMs: result.latencyMs ?? performance.now() - started,
    calls: result.calls,
  };
  if (result.replyStatus) outcome.replyStatus = result.replyStatus;
  if (board) outcome.board = JSON.stringify(board.row(result.text));
  if (pooled && call.role === 'relay') outcome.version = encodeSpentVersion(result.text, result.completionTokens);
  return embed(outcome, services);
}

/** A pooled relay's member versions carry the tokens their calls spent: a member's share of the pool is what they left. */
function pooledReads(run: RunPlan, call: TeamCallPlan, versions: readonly string[]): { reads: readonly string[]; spent: number } {
  let spent = 0;
  const reads = versions.map((v, i) => {
    if (callsOf(run)[call.reads[i].event].role !== 'relay') return v;
    const read = decodeSpentVersion(v);
    spent += read.completionTokens;
    return read.text;
  });
  return { reads, spent };
}

/** The call's prompt. An observer or extractor reads a member's reply; it is not the member (no persona, no hidden belief). */
function teamMessages(
  run: RunPlan,
  call: TeamCallPlan,
  reading: Parameters<typeof renderTeamCall>[0]['reads'],
  observing: boolean,
  board?: readonly string[],
) {
  const member = call.agent < run.n && !observing ? agentPersona(run, call.agent) : undefined;
  return renderTeamCall({
    call,
    size: run.n,
    rounds: run.sweeps,
    question: run.prompt.question,
    reads: reading,
    ...(member?.text ? { hidden: member.text } : {}),
    ...(run.protocol !== DEFAULT_PROTOCOL ? { arm: run.protocol } : {}),
    ...(board ? { board } : {}),
    ...(run.controls.team?.revisions ? { revisions: run.controls.team.revisions } : {}),
    dynamics: run.dynamics,
  });
}

async function embed(outcome: EventOutcome, services: WorkerServices): Promise<EventOutcome> {
  const encoders: readonly Encoder[] = services.encoders;
  for (const encoder of encoders)
    outcome.embeddings[encoder.name] = encoder.embedNow?.(outcome.response) ?? (await encoder.encode([outcome.response]))[0];
  return outcome;
}
