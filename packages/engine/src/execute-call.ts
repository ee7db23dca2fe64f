/**
 * What every call of an event shares, whatever the protocol: the worker's services, an agent's hidden text,
 * the timed model call, a protocol call's seed and row, and the answer's outcome (embedded). The protocols'
 * executors (execute-event, execute-ssvp, execute-team, execute-boundary) import it; it imports none of them.
 */
import { performance } from 'node:perf_hooks';
import {
  applyEntries,
  assignPopulation,
  type decodeBoardVersion,
  encodeBoardVersion,
  isBoardProtocol,
  mixSeed,
  parseBoardReply,
  personaText,
  promptLength,
  withBriefing,
  renderPrompt,
  type ChatMessages,
  type PromptContext,
  type PromptTemplate,
  type RunPlan,
} from '@panta/core';
import type { Encoder } from '@panta/embed';
import type { Judge } from '@panta/judge';
import type { ChatRequest, ChatResult, LlmBackend } from '@panta/llm';
import type { CallOutcome, EventOutcome, EventTask } from './task.js';

/** What a worker needs besides the task: the same in embedded and distributed mode. */
export interface WorkerServices {
  backend: LlmBackend;
  encoders: readonly Encoder[];
  template: PromptTemplate;
  maxTokens: number;
  fixedLength: boolean;
  /** Tags snapshots at sweep boundaries (early stopping reads rho); the collector's judge in embedded mode. */
  judge?: Judge;
}

/** The services as a run sees them: with its own template when the sweep grids templates. */
export function runServices(run: RunPlan, services: WorkerServices): WorkerServices {
  return run.template && run.template !== services.template ? { ...services, template: run.template } : services;
}

/** The encoder whose raw embeddings measure divergence and control magnetisation. */
export function controlEncoder(run: RunPlan, services: WorkerServices): Encoder {
  const name = run.controls.encoder;
  const encoder = name ? services.encoders.find((e) => e.name === name) : services.encoders[0];
  if (!encoder) throw new Error(`ssvp.encoder ${name} is not one of the sweep's encoders`);
  return encoder;
}

/**
 * Each run's assignment of population entries to agents, computed once. Keyed by the run's plan object, not its
 * id: a worker serving two sweeps whose runs share ids (the same grid under another seed or population file)
 * must not deal the first sweep's assignment to the second; a plan no longer held is forgotten with it.
 */
const personas = new WeakMap<RunPlan, Int32Array>();

/** The hidden text of an agent of a run (persona and/or belief), if the sweep has a population. */
export function agentPersona(run: RunPlan, agent: number): { id: string; text: string; belief?: string } | undefined {
  const population = run.population;
  if (!population) return undefined;
  let assigned = personas.get(run);
  if (!assigned) personas.set(run, (assigned = assignPopulation(population, run.n, run.seed)));
  const index = assigned[agent];
  // Team members past the population (a hub's orchestrator, a debate's judge) hold none.
  if (index === undefined || index < 0) return undefined;
  const entry = population.entries[index];
  // A prompt may brief the agent holding this entry privately (a role's injected mismatch).
  const text = withBriefing(personaText(entry), run.prompt, entry.id);
  return { id: entry.id, text, ...(entry.belief ? { belief: entry.belief } : {}) };
}

/**
 * An agent's request: the messages are rendered (once) only when a backend asks for them. One object per
 * call, its methods on the prototype: closures for them cost three allocations per event.
 */
class AgentRequest implements ChatRequest {
  private rendered: ChatMessages | undefined;

  constructor(
    private readonly template: PromptTemplate,
    readonly context: PromptContext,
    readonly seed: number,
    readonly temperature: number,
    readonly maxTokens: number,
    readonly fixedLength: boolean,
    readonly depth?: number,
  ) {}

  messages(): ChatMessages {
    return (this.rendered ??= renderPrompt(this.template, this.context));
  }

  promptLength(): { system: number; user: number } {
    return promptLength(this.template, this.context);
  }
}

/** One LLM call with its context, timed. */
export function callModel(
  services: WorkerServices,
  context: PromptContext,
  seed: number,
  temperature: number,
  depth?: number,
): Promise<{ result: ChatResult; latencyMs: number }> {
  return timedCall(services, context, seed, temperature, (result, latencyMs) => ({ result, latencyMs }), depth);
}

/** The call, and `then` on its result and latency in the same reaction (the agent's call: one promise fewer). */
export function timedCall<T>(
  services: WorkerServices,
  context: PromptContext,
  seed: number,
  temperature: number,
  then: (result: ChatResult, latencyMs: number) => T | Promise<T>,
  depth?: number,
): Promise<T> {
  const started = performance.now();
  return services.backend
    .complete(new AgentRequest(services.template, context, seed, temperature, services.maxTokens, services.fixedLength, depth))
    .then((result) => then(result, result.latencyMs ?? performance.now() - started));
}

/** A protocol call's row: its seed is derived from its event's and its role, so a retry sends the same one. */
export function callSeed(eventSeed: number, role: string): number {
  return mixSeed(eventSeed, role) >>> 1;
}

export function callOutcome(role: CallOutcome['role'], seed: number, call: { result: ChatResult; latencyMs: number }): CallOutcome {
  const { result } = call;
  const outcome: CallOutcome = {
    role,
    seed,
    response: result.text,
    finishReason: result.finishReason,
    promptTokens: result.promptTokens,
    completionTokens: result.completionTokens,
    latencyMs: call.latencyMs,
    calls: result.calls,
    createdAt: Date.now(),
  };
  if (result.replyStatus) outcome.replyStatus = result.replyStatus;
  return outcome;
}

/** The event's outcome from the agent's call: its answer (a board reply parsed), embedded by every encoder. */
export function answer(
  task: EventTask,
  services: WorkerServices,
  result: ChatResult,
  latencyMs: number,
  ownEntries: ReturnType<typeof decodeBoardVersion>['entries'] | undefined,
): EventOutcome | Promise<EventOutcome> {
  const { run, plan } = task;
  let response = result.text;
  let board: string | undefined;
  let version: string | undefined;
  if (isBoardProtocol(run.protocol)) {
    const reply = parseBoardReply(result.text);
    const applied = applyEntries(ownEntries ?? [], plan.event, reply.entries);
    response = reply.answer;
    board = JSON.stringify(applied.written);
    version = encodeBoardVersion({ answer: response, entries: applied.live });
  }
  const outcome: EventOutcome = {
    runId: run.runId,
    event: plan.event,
    response,
    finishReason: result.finishReason,
    promptTokens: result.promptTokens,
    completionTokens: result.completionTokens,
    latencyMs,
    calls: result.calls,
    embeddings: {},
    createdAt: Date.now(),
  };
  // An empty or unparsable reply kept after its retries: its answer is "", tagged and embedded like any.
  if (result.replyStatus) outcome.replyStatus = result.replyStatus;
  if (board !== undefined) {
    outcome.board = board;
    outcome.version = version;
  }
  // Encoders that need no I/O (hashing) embed at once; others (onnx) are awaited.
  let pending: Encoder[] | undefined;
  for (const encoder of services.encoders) {
    const now = encoder.embedNow?.(response);
    if (now) outcome.embeddings[encoder.name] = now;
    else (pending ??= []).push(encoder);
  }
  if (!pending) return outcome;
  return embedAll(outcome, pending);
}

async function embedAll(outcome: EventOutcome, encoders: readonly Encoder[]): Promise<EventOutcome> {
  for (const encoder of encoders) outcome.embeddings[encoder.name] = (await encoder.encode([outcome.response]))[0];
  return outcome;
}
