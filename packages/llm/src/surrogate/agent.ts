import { classifyAnswer, rngFrom, type Prompt, type SurrogateBackendSpec } from '@panta/core';
import { ANSWER_FRAMES, NOT_KNOWN_FRAMES, pickVaried } from './phrasing.js';

/**
 * A Potts-like agent (issue 2): its options are "correct", each known false answer, and "not known". It
 * picks option a with probability proportional to exp((J * share_a + h_a) / T), where share_a is the share
 * of a among the answers it reads (its own previous answer and its neighbours'), then words it. The reply
 * is a pure function of (seed, what it reads), like a model served with a fixed seed.
 */
export interface SurrogateReply {
  text: string;
  /** 0 = correct, 1..F = known false answer F-1, F+1 = not known. */
  option: number;
}

export class SurrogateAgent {
  private readonly optionCount: number;
  private readonly field: Float64Array;
  /** Option each answer text expresses: texts repeat a lot, matching them is not free. */
  private readonly readCache = new Map<string, number>();

  constructor(
    readonly prompt: Prompt,
    readonly spec: SurrogateBackendSpec,
  ) {
    const f = prompt.false_answers.length;
    this.optionCount = f + 2;
    this.field = new Float64Array(this.optionCount);
    this.field[0] = spec.field.correct;
    for (let i = 0; i < f; i++) this.field[1 + i] = spec.field.false + (prompt.false_premise ? spec.premise_bias : 0);
    this.field[f + 1] = spec.field.not_known;
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

  /** `previous` is undefined at t = 0, where the agent answers alone. */
  reply(seed: number, temperature: number, previous: string | undefined, neighbours: readonly string[]): SurrogateReply {
    const q = this.optionCount;
    const counts = new Float64Array(q);
    const read = previous === undefined ? 0 : 1 + neighbours.length;
    if (previous !== undefined) {
      counts[this.optionOf(previous)]! += 1;
      for (const text of neighbours) counts[this.optionOf(text)]! += 1;
    }
    const rng = rngFrom(seed, 'surrogate');
    const logits = new Float64Array(q);
    for (let a = 0; a < q; a++) logits[a] = this.spec.coupling * (read > 0 ? counts[a]! / read : 0) + this.field[a]!;
    const option = sampleSoftmax(logits, temperature, rng.next());
    const u = rng.next();
    const v = rng.next();
    return { text: this.word(option, temperature, u, v), option };
  }

  private word(option: number, temperature: number, u: number, v: number): string {
    if (option === this.optionCount - 1) return NOT_KNOWN_FRAMES[pickVaried(NOT_KNOWN_FRAMES.length, temperature, u)]!;
    const phrases = option === 0 ? this.prompt.accepted : [this.prompt.false_answers[option - 1]!];
    const phrase = phrases[pickVaried(phrases.length, temperature, v)]!;
    return ANSWER_FRAMES[pickVaried(ANSWER_FRAMES.length, temperature, u)]!.replace('{a}', phrase);
  }
}

/** Samples argmax-free from softmax(logits / T); T = 0 takes the first maximum. */
export function sampleSoftmax(logits: Float64Array, temperature: number, u: number): number {
  let max = -Infinity;
  let arg = 0;
  for (let a = 0; a < logits.length; a++) {
    if (logits[a]! > max) {
      max = logits[a]!;
      arg = a;
    }
  }
  if (temperature <= 0) return arg;
  const weights = new Float64Array(logits.length);
  let total = 0;
  for (let a = 0; a < logits.length; a++) {
    weights[a] = Math.exp((logits[a]! - max) / temperature);
    total += weights[a]!;
  }
  let x = u * total;
  for (let a = 0; a < logits.length; a++) {
    x -= weights[a]!;
    if (x < 0) return a;
  }
  return logits.length - 1;
}

