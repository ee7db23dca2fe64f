import { estimateTokens, type Prompt, type SurrogateBackendSpec } from '@panta/core';
import type { ChatRequest, ChatResult, LlmBackend } from '../backend.js';
import { SurrogateAgent } from './agent.js';
import { surrogateJudgeReply } from './judge-reply.js';
import type { ScenarioModel } from './scenario.js';
import { resolveScenarios } from './scenarios/index.js';
import { teamReply } from './team-reply.js';

/**
 * The surrogate as an LLM backend: one agent per prompt, keyed by question text as a model would see it,
 * playing the scenario the spec names (scenarios/index.ts).
 */
export class SurrogateBackend implements LlmBackend {
  readonly kind = 'surrogate';
  readonly model: string;
  private readonly agents = new Map<string, SurrogateAgent>();
  private readonly scenarios: readonly ScenarioModel[];

  /** `scenarios`: the models it plays, in the order they are asked (default: the spec's). */
  constructor(
    readonly spec: SurrogateBackendSpec,
    private readonly prompts: readonly Prompt[],
    scenarios: readonly ScenarioModel[] = resolveScenarios(spec.scenario),
  ) {
    this.model = spec.model;
    this.scenarios = scenarios;
    for (const p of prompts) this.agents.set(p.question, new SurrogateAgent(p, spec, this.scenarios));
  }

  complete(request: ChatRequest): Promise<ChatResult> {
    try {
      return this.answer(request);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private answer(request: ChatRequest): Promise<ChatResult> {
    const { context } = request;
    let text: string;
    // A judge's rubric (an LLM judge on the surrogate backend) is graded as serve-surrogate grades it.
    const messages = context ? null : request.messages();
    const graded = messages && surrogateJudgeReply(messages, (q) => this.prompts.find((p) => p.question === q), this.scenarios);
    if (graded !== null) {
      text = graded;
    } else if (!context) {
      // Team calls (docs/teams.md) come as text only: read back as the server reads them.
      const team = teamReply(
        messages ?? request.messages(),
        { seed: request.seed, temperature: request.temperature, maxTokens: request.maxTokens },
        this.prompts,
        this.scenarios,
        (p) => this.agents.get(p.question)!,
      );
      if (team === null) throw new Error('surrogate: it answers agent prompts and team calls only (no prompt context given)');
      text = team;
    } else {
      const agent = this.agents.get(context.question);
      if (!agent) throw new Error(`surrogate: no prompt with question ${JSON.stringify(context.question.slice(0, 60))}`);
      text = agent.respond(request.seed, request.temperature, context);
    }
    const completion = estimateTokens(text);
    // The same count as estimateTokens on each rendered message, without rendering a mean-field prompt.
    const prompt = request.promptLength();
    const cut = request.fixedLength && completion < request.maxTokens;
    const result: ChatResult = {
      text,
      finishReason: cut ? 'length' : 'stop',
      promptTokens: Math.ceil(prompt.system / 4) + Math.ceil(prompt.user / 4),
      completionTokens: request.fixedLength ? request.maxTokens : Math.min(completion, request.maxTokens),
      calls: 1,
    };
    // A plain timer resolving with the result: no async frame and no timers/promises options per call.
    if (this.spec.latency_ms > 0) return new Promise((resolve) => setTimeout(resolve, this.spec.latency_ms, result));
    return Promise.resolve(result);
  }

  async close(): Promise<void> {}
}
