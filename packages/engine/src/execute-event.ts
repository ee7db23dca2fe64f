import { performance } from 'node:perf_hooks';
import { promptLength, renderPrompt, type ChatMessages, type PromptContext, type PromptTemplate } from '@panta/core';
import type { Encoder } from '@panta/embed';
import type { LlmBackend } from '@panta/llm';
import type { EventOutcome, EventTask } from './task.js';

/** What a worker needs besides the task: the same in embedded and distributed mode. */
export interface WorkerServices {
  backend: LlmBackend;
  encoders: readonly Encoder[];
  template: PromptTemplate;
  maxTokens: number;
  fixedLength: boolean;
}

/**
 * The worker's half of an event: build the prompt from the versions it reads (own previous answer first,
 * then neighbours in prompt order), call the model, embed the answer.
 */
export async function executeEvent(task: EventTask, reads: readonly string[], services: WorkerServices): Promise<EventOutcome> {
  const { run, plan } = task;
  const context: PromptContext = {
    question: run.prompt.question,
    sweep: plan.sweep,
    temperature: run.temperature,
    previous: plan.readVersions.length > 0 ? reads[0] : undefined,
    neighbourAgents: plan.neighbours,
    neighbourAnswers: reads.slice(1),
  };
  let messages: ChatMessages | undefined;
  const started = performance.now();
  const result = await services.backend.complete({
    messages: () => (messages ??= renderPrompt(services.template, context)),
    promptLength: () => promptLength(services.template, context),
    seed: plan.seed,
    temperature: run.temperature,
    maxTokens: services.maxTokens,
    fixedLength: services.fixedLength,
    context,
  });
  const latencyMs = performance.now() - started;
  const embeddings: Record<string, Float32Array> = {};
  for (const encoder of services.encoders) embeddings[encoder.name] = (await encoder.encode([result.text]))[0]!;
  return {
    runId: run.runId,
    event: plan.event,
    response: result.text,
    finishReason: result.finishReason,
    promptTokens: result.promptTokens,
    completionTokens: result.completionTokens,
    latencyMs,
    calls: result.calls,
    embeddings,
    createdAt: Date.now(),
  };
}
