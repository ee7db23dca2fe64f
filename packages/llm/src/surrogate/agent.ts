import { classifyAnswer, rngFrom, type Prompt, type PromptContext, type SurrogateBackendSpec } from '@panta/core';
import { ANSWER_FRAMES, NOT_KNOWN_FRAMES, pickVaried } from './phrasing.js';
import type { AgentHooks, AgentView, ScenarioModel } from './scenario.js';
import { resolveScenarios } from './scenarios/index.js';
import { contextMergeReply, summaryReply } from './ssvp-reply.js';

/**
 * A Potts-like agent: its options are "correct", each known false answer, and "not known". It
 * picks option a with probability proportional to exp((J * share_a + h_a) / T), where share_a is the share
 * of a among the answers it reads (its own previous answer and its neighbours'), then words it. The reply
 * is a pure function of (seed, what it reads), like a model served with a fixed seed. It knows no task: a
 * scenario model (scenario.ts) changes its field and what it reads on the prompts the scenario takes.
 */
export interface SurrogateReply {
  text: string;
  /** 0 = correct, 1..F = known false answer F-1, F+1 = not known. */
  option: number;
}

export class SurrogateAgent implements AgentView {
  private readonly optionCount: number;
  private readonly field: Float64Array;
  /** Option each answer text expresses: texts repeat a lot, matching them is not free. */
  private readonly readCache = new Map<string, number>();
  private readonly sentences = new Map<number, string>();
  private readonly counts: Float64Array;
  private readonly logits: Float64Array;
  private readonly weights: Float64Array;
  /** The two draws after the option's, for its wording (set by sample). */
  private u = 0;
  private v = 0;
  /** The first scenario's hooks on this prompt, if any. */
  private readonly hooks: AgentHooks | undefined;

  constructor(
    readonly prompt: Prompt,
    readonly spec: SurrogateBackendSpec,
    scenarios: readonly ScenarioModel[] = resolveScenarios(spec.scenario),
  ) {
    for (const s of scenarios) if ((this.hooks = s.agent?.(prompt))) break;
    const f = prompt.false_answers.length;
    this.optionCount = f + 2;
    this.field = new Float64Array(this.optionCount);
    this.counts = new Float64Array(this.optionCount);
    this.logits = new Float64Array(this.optionCount);
    this.weights = new Float64Array(this.optionCount);
    this.field[0] = spec.field.correct + (this.hooks?.correctField ?? 0);
    for (let i = 0; i < f; i++) this.field[1 + i] = spec.field.false + (prompt.false_premise ? spec.premise_bias : 0);
    this.field[f + 1] = spec.field.not_known;
  }

  /** The option "not known" (no accepted and no known false answer, or both). */
  get notKnownOption(): number {
    return this.optionCount - 1;
  }

  /** The prior field of an option (what a merge weighs sources by). */
  prior(option: number): number {
    return this.field[option];
  }

  optionOf(text: string): number {
    let option = this.readCache.get(text);
    if (option === undefined) {
      const c = classifyAnswer(this.prompt, text);
      option = c.kind === 'correct' ? 0 : c.kind === 'false' ? 1 + c.index : this.optionCount - 1;
      if (this.readCache.size > 100_000) this.readCache.clear();
      this.readCache.set(text, option);
    }
    return option;
  }

  /**
   * `previous` is undefined at t = 0, where the agent answers alone. A hidden `belief` adds the spec's
   * belief field to the option it names; `coupling` scales J (a merge reads with half of it).
   */
  reply(
    seed: number,
    temperature: number,
    previous: string | undefined,
    neighbours: readonly string[],
    belief?: string,
    coupling = 1,
  ): SurrogateReply {
    const option = this.sample(seed, temperature, previous, neighbours, belief, coupling);
    return { text: this.word(option, temperature, this.u, this.v), option };
  }

  /** The reply's text alone (an agent's call): no reply object per call. */
  private replyText(
    seed: number,
    temperature: number,
    previous: string | undefined,
    neighbours: readonly string[],
    belief?: string,
  ): string {
    const option = this.sample(seed, temperature, previous, neighbours, belief, 1);
    return this.word(option, temperature, this.u, this.v);
  }

  /** Samples the option (see the class comment); the logits stay in this.logits until the next sample. */
  private sample(
    seed: number,
    temperature: number,
    previous: string | undefined,
    neighbours: readonly string[],
    belief: string | undefined,
    coupling: number,
  ): number {
    const q = this.optionCount;
    // Scratch (replies are computed synchronously, one at a time): no arrays allocated per reply.
    const counts = this.counts.fill(0);
    const read = previous === undefined ? 0 : 1 + neighbours.length;
    if (previous !== undefined) {
      counts[this.optionOf(previous)] += 1;
      for (const text of neighbours) counts[this.optionOf(text)] += 1;
    }
    const rng = rngFrom(seed, 'surrogate');
    const logits = this.logits;
    for (let a = 0; a < q; a++) logits[a] = coupling * this.spec.coupling * (read > 0 ? counts[a] / read : 0) + this.field[a];
    if (belief !== undefined) logits[this.optionOf(belief)] += this.spec.belief;
    const option = sampleSoftmax(logits, temperature, rng.next(), this.weights);
    this.u = rng.next();
    this.v = rng.next();
    return option;
  }

  /** What the agent says to a call of any kind (protocol calls read their own fields of the context). */
  respond(seed: number, temperature: number, context: PromptContext): string {
    switch (context.kind) {
      case 'merge':
        return this.merge(seed, temperature, context.previous ?? '', context.neighbourAnswers);
      case 'drift-judge':
        return this.judgeDrift(context.before ?? '', context.after ?? '');
      case 'moderator':
        return this.moderate(context.before ?? '');
      case 'summary':
        return this.hooks?.summary ? this.hooks.summary(this, context) : summaryReply(this, context);
      case 'context-merge':
        return this.hooks?.contextMerge ? this.hooks.contextMerge(this, context) : contextMergeReply(this, context);
      default: {
        const own = this.hooks?.reply?.(this, seed, temperature, context);
        if (own !== undefined) return own;
        // A merge's review and a moderator's message are read like one more answer.
        let reads = this.hooks?.reads ? this.hooks.reads(context.neighbourAnswers) : context.neighbourAnswers;
        if (context.merge !== undefined || context.moderator) {
          const extra = [...reads];
          if (context.merge !== undefined) extra.push(context.merge);
          if (context.moderator) extra.push(context.moderator);
          reads = extra;
        }
        const belief = context.persona === undefined || !this.hooks?.belief ? context.belief : this.hooks.belief(this, context);
        if (context.board) return this.boardReply(seed, temperature, context.previous, reads, belief);
        return this.replyText(seed, temperature, context.previous, reads, belief);
      }
    }
  }

  /** ssvp's merge: names the disagreement and the answer it finds more likely right (prior-weighted). */
  merge(seed: number, temperature: number, own: string, neighbours: readonly string[]): string {
    const { text } = this.reply(seed, temperature, own, neighbours, undefined, 0.5);
    return `The sources disagree. The more likely right: ${text}`;
  }

  /** drift-policy's judge: the majority answer changed option, or not. */
  judgeDrift(before: string, after: string): string {
    return this.optionOf(before) === this.optionOf(after)
      ? 'STABLE: the majority answer did not change.'
      : 'DRIFT: the majority answer changed.';
  }

  /** drift-policy's moderator: restates the earlier majority answer. */
  moderate(before: string): string {
    return `Let us come back to the question. Earlier the group answered: ${before}`;
  }

  /** belief-board: the answer plus one board entry on the answer, with the agent's confidence. */
  boardReply(seed: number, temperature: number, previous: string | undefined, neighbours: readonly string[], belief?: string): string {
    const option = this.sample(seed, temperature, previous, neighbours, belief, 1);
    const text = this.word(option, temperature, this.u, this.v);
    const p = softmaxAt(this.logits, temperature, option);
    return JSON.stringify({ answer: text, entries: [{ object: 'answer', claim: text, confidence: Math.round(p * 100) / 100 }] });
  }

  private word(option: number, temperature: number, u: number, v: number): string {
    if (option === this.optionCount - 1) return NOT_KNOWN_FRAMES[pickVaried(NOT_KNOWN_FRAMES.length, temperature, u)];
    const phrases = option === 0 ? this.prompt.accepted : [this.prompt.false_answers[option - 1]];
    const p = pickVaried(phrases.length, temperature, v);
    const f = pickVaried(ANSWER_FRAMES.length, temperature, u);
    // One string per (option, phrase, frame): a population repeats a few dozen sentences, and a shared
    // string costs nothing to keep in the rows waiting to be written.
    const key = (option * 65_536 + p) * ANSWER_FRAMES.length + f; // a prompt has far fewer than 65,536 phrasings
    let text = this.sentences.get(key);
    if (text === undefined) this.sentences.set(key, (text = ANSWER_FRAMES[f].replace('{a}', phrases[p])));
    return text;
  }
}

/** Probability of option a under softmax(logits / T) (T = 0: 1 for the first maximum). */
function softmaxAt(logits: Float64Array, temperature: number, a: number): number {
  let max = -Infinity;
  for (const l of logits) max = Math.max(max, l);
  if (temperature <= 0) return logits[a] === max ? 1 : 0;
  let total = 0;
  for (const l of logits) total += Math.exp((l - max) / temperature);
  return Math.exp((logits[a] - max) / temperature) / total;
}

/** Samples argmax-free from softmax(logits / T); T = 0 takes the first maximum. */
export function sampleSoftmax(
  logits: Float64Array,
  temperature: number,
  u: number,
  weights: Float64Array = new Float64Array(logits.length),
): number {
  let max = -Infinity;
  let arg = 0;
  for (let a = 0; a < logits.length; a++) {
    if (logits[a] > max) {
      max = logits[a];
      arg = a;
    }
  }
  if (temperature <= 0) return arg;
  let total = 0;
  for (let a = 0; a < logits.length; a++) {
    weights[a] = Math.exp((logits[a] - max) / temperature);
    total += weights[a];
  }
  let x = u * total;
  for (let a = 0; a < logits.length; a++) {
    x -= weights[a];
    if (x < 0) return a;
  }
  return logits.length - 1;
}
