import {
  DEFAULT_TEMPLATE,
  estimateTokens,
  parseProtocolCall,
  splitAgentPrompt,
  surrogateBackendSchema,
  type Prompt,
  type PromptContext,
  type PromptTemplate,
} from '@panta/core';
import { SurrogateAgent } from '../surrogate/agent.js';
import { surrogateJudgeReply } from '../surrogate/judge-reply.js';
import { compilePromptParser, type PromptParser } from '../surrogate/parse-prompt.js';
import type { ScenarioModel } from '../surrogate/scenario.js';
import { resolveScenarios } from '../surrogate/scenarios/index.js';
import { ssvpContext } from '../surrogate/ssvp-context.js';
import { teamReply } from '../surrogate/team-reply.js';
import { RequestError, type GenerationRequest, type GenerationResult, type SurrogateServerOptions } from './types.js';

/**
 * Answers a generation request exactly as the in-process SurrogateBackend answers the same event: the prompt
 * is parsed back into (question, previous answer, neighbour answers), the agent replies for the request's
 * seed and temperature, and tokens are counted the same way (about four characters a token).
 */
export class SurrogateResponder {
  readonly model: string;
  readonly template: PromptTemplate;
  /** Each template the prompts may be renderings of, with its parser: `template` first. */
  private readonly readers: { template: PromptTemplate; parser: PromptParser }[];
  private readonly agents = new Map<string, SurrogateAgent>();
  private readonly prompts = new Map<string, Prompt>();
  private readonly scenarios: readonly ScenarioModel[];

  constructor(options: SurrogateServerOptions) {
    const spec = surrogateBackendSchema.parse({
      kind: 'surrogate',
      ...options.surrogate,
      ...(options.model ? { model: options.model } : {}),
    });
    this.model = spec.model;
    this.template = options.template ?? DEFAULT_TEMPLATE;
    const multilineQuestions = options.prompts.some((p) => p.question.includes('\n'));
    this.readers = [{ template: this.template, file: options.templateFile }, ...(options.moreTemplates ?? [])].map((t) => ({
      template: t.template,
      parser: compilePromptParser(t.template, t.file, { multilineQuestions }),
    }));
    this.scenarios = resolveScenarios(spec.scenario);
    for (const p of options.prompts) {
      this.agents.set(p.question, new SurrogateAgent(p, spec, this.scenarios));
      this.prompts.set(p.question, p);
    }
  }

  get promptCount(): number {
    return this.agents.size;
  }

  answer(request: GenerationRequest): GenerationResult {
    const { system, user } = request.messages;
    const graded = this.grade(request);
    if (graded) return graded;
    const text =
      this.teamReply(request) ??
      (() => {
        const context = this.context(request.messages, request.temperature);
        return this.agentFor(context.question).respond(request.seed, request.temperature, context);
      })();
    // The in-process backend's accounting (packages/llm/src/surrogate/backend.ts), term for term.
    const natural = estimateTokens(text);
    const max = request.maxTokens ?? Infinity;
    const fixed = request.fixedLength && request.maxTokens !== undefined;
    const completionTokens = fixed ? max : Math.min(Math.max(natural, request.minTokens), max);
    return {
      text,
      finishReason: fixed && natural < max ? 'length' : 'stop',
      promptTokens: Math.ceil(system.length / 4) + Math.ceil(user.length / 4),
      completionTokens,
    };
  }

  /** A team call's reply (docs/teams.md), as the in-process surrogate gives it; null for other prompts. */
  private teamReply(request: GenerationRequest): string | null {
    try {
      return teamReply(
        request.messages,
        { seed: request.seed, temperature: request.temperature, maxTokens: request.maxTokens ?? Number.POSITIVE_INFINITY },
        [...this.prompts.values()],
        this.scenarios,
        (p) => this.agentFor(p.question),
      );
    } catch (e) {
      throw new RequestError(400, `messages: ${(e as Error).message}`, 'messages');
    }
  }

  /**
   * The structured view the in-process surrogate is handed, read back from the text: a protocol call (ssvp's
   * merge, drift-policy's judge and moderator), or an agent prompt with its protocol parts (board, persona,
   * hidden belief, moderator message, merge review) around the template's rendering.
   */
  private context(messages: GenerationRequest['messages'], temperature: number): PromptContext {
    const ssvp = ssvpContext(
      messages,
      temperature,
      this.readers.map((r) => r.template.system),
    );
    if (ssvp) return ssvp;
    const call = parseProtocolCall(messages);
    if (call) {
      return call.kind === 'merge'
        ? {
            kind: 'merge',
            question: call.question,
            sweep: -1,
            temperature,
            previous: call.own,
            neighbourAgents: [],
            neighbourAnswers: call.neighbours,
          }
        : {
            kind: call.kind,
            question: call.question,
            sweep: call.sweep,
            temperature,
            neighbourAgents: [],
            neighbourAnswers: [],
            before: call.before,
            after: call.after,
          };
    }
    let split: ReturnType<typeof splitAgentPrompt> = null;
    let parsed: ReturnType<PromptParser['parse']> = null;
    for (const r of this.readers) {
      split = splitAgentPrompt(r.template.system, messages);
      parsed = split && r.parser.parse(split.messages);
      if (split && parsed) break;
    }
    if (!split || !parsed) {
      const { system } = messages;
      const why = !this.readers.some((r) => system.startsWith(r.template.system))
        ? "the system message is not the template's"
        : 'the user message is not a rendering of the template';
      throw new RequestError(
        400,
        `messages: ${why} (the surrogate reads the prompt back with the template it was started with; answers must not contain newlines)`,
        'messages',
      );
    }
    return {
      question: parsed.question,
      sweep: parsed.sweep,
      temperature,
      previous: parsed.previous,
      neighbourAgents: parsed.neighbourAgents,
      neighbourAnswers: parsed.neighbourAnswers,
      ...(parsed.merge !== undefined ? { merge: parsed.merge } : {}),
      ...(split.board ? { board: true } : {}),
      ...(split.persona ? { persona: split.persona } : {}),
      ...(split.belief !== undefined ? { belief: split.belief } : {}),
      ...(split.moderator !== undefined ? { moderator: split.moderator } : {}),
    };
  }

  private agentFor(question: string): SurrogateAgent {
    const agent = this.agents.get(question);
    if (!agent)
      throw new RequestError(
        400,
        `messages: unknown question ${JSON.stringify(question)}: not in the server's prompt set (${this.agents.size} prompts)`,
        'messages',
      );
    return agent;
  }

  /**
   * The surrogate judge: a judge's rubric graded as the in-process surrogate grades it (surrogate/judge-reply.ts),
   * so the LLM judge can be run and tested end to end without a model; null when the request is no rubric.
   */
  private grade(request: GenerationRequest): GenerationResult | null {
    const { system, user } = request.messages;
    let text: string | null;
    try {
      text = surrogateJudgeReply(request.messages, (q) => this.prompts.get(q), this.scenarios);
    } catch (error) {
      throw new RequestError(400, `messages: ${(error as Error).message.replace(/^surrogate: /, '')}`, 'messages');
    }
    if (text === null) return null;
    return {
      text,
      finishReason: 'stop',
      promptTokens: Math.ceil(system.length / 4) + Math.ceil(user.length / 4),
      completionTokens: estimateTokens(text),
    };
  }
}
