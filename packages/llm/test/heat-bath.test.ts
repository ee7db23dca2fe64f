import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyAnswer, parseDataset, type PromptContext, surrogateBackendSchema } from '@panta/core';
import { ROOT } from '../../../test/helpers.js';
import { heatBathProbabilities, SurrogateAgent } from '../src/index.js';

const spins = parseDataset(readFileSync(join(ROOT, 'datasets', 'spins.jsonl'), 'utf8'), 'spins.jsonl');
const [ising, potts3] = [spins.find((p) => p.id === 'ising')!, spins.find((p) => p.id === 'potts3')!];
const rheon = parseDataset(readFileSync(join(ROOT, 'datasets', 'rheon6.jsonl'), 'utf8'), 'rheon6.jsonl');
const spec = (scenario: string, coupling = 1, initial?: string) =>
  surrogateBackendSchema.parse({ kind: 'surrogate', scenario, coupling, ...(initial ? { initial } : {}) });

/** An update call reading `neighbours` (its own previous answer `previous`). */
function update(question: string, neighbours: string[], previous = neighbours[0] ?? 'up'): PromptContext {
  return {
    question,
    sweep: 1,
    temperature: 1,
    previous,
    neighbourAgents: neighbours.map((_, i) => i),
    neighbourAnswers: neighbours,
  };
}

/** Frequencies of each state over `draws` seeds. */
function frequencies(agent: SurrogateAgent, states: string[], temperature: number, context: PromptContext, draws: number): number[] {
  const counts = states.map(() => 0);
  for (let seed = 0; seed < draws; seed++) counts[states.indexOf(agent.respond(seed, temperature, context))]! += 1;
  return counts.map((c) => c / draws);
}

/** Every frequency within 4.5 binomial standard errors of its probability. */
function expectClose(freq: number[], p: number[], draws: number): void {
  freq.forEach((f, s) => expect(Math.abs(f - p[s]!)).toBeLessThan(4.5 * Math.sqrt((p[s]! * (1 - p[s]!)) / draws) + 1e-9));
}

describe('the heat-bath spin scenarios (ising, potts, and their mean-field normalisation)', () => {
  it('ising: p(up) = 1 / (1 + exp(-2 J (n_up - n_down) / T)) for a hand-built neighbourhood, own previous answer not read', () => {
    const agent = new SurrogateAgent(ising, spec('ising', 1.5));
    // Three up, one down, previous "down" (ignored): p(up) = 1 / (1 + exp(-2 * 1.5 * 2 / 2)) = 1 / (1 + e^-3).
    const p = 1 / (1 + Math.exp(-3));
    expect(heatBathProbabilities([3, 1], 2 * 1.5, 2)[0]).toBeCloseTo(p, 14);
    const context = update(ising.question, ['up', 'down', 'up', 'up'], 'down');
    const draws = 6000;
    expectClose(frequencies(agent, ['up', 'down'], 2, context, draws), [p, 1 - p], draws);
    // The same seed and the same answers read, in any order, give the same reply.
    const shuffled = update(ising.question, ['up', 'up', 'down', 'up'], 'up');
    for (let seed = 0; seed < 200; seed++) expect(agent.respond(seed, 2, shuffled)).toBe(agent.respond(seed, 2, context));
  });

  it('potts: q = 1 + false answers, p(s) proportional to exp(J n_s / T); a phrase that is no state is not counted', () => {
    const agent = new SurrogateAgent(potts3, spec('potts', 1));
    const states = ['red', 'green', 'blue'];
    // n = (2, 1, 0) at T = 0.8: weights e^(2 / 0.8), e^(1 / 0.8), 1.
    const w = [Math.exp(2 / 0.8), Math.exp(1 / 0.8), 1];
    const p = w.map((x) => x / (w[0]! + w[1]! + w[2]!));
    expect(heatBathProbabilities([2, 1, 0], 1, 0.8)).toEqual(p.map((x) => expect.closeTo(x, 14)));
    const context = update(potts3.question, ['red', 'I am not sure.', 'green', 'The answer is red.']);
    const draws = 6000;
    expectClose(frequencies(agent, states, 0.8, context, draws), p, draws);
    // Replies are the bare state strings, which the reference judge reads back as the state itself.
    for (const text of states) expect(classifyAnswer(potts3, text).kind).toBe(text === 'red' ? 'correct' : 'false');
  });

  it('ising-meanfield: the coupling is J / N with N = k + 1 (Curie-Weiss); potts with q = 2 is ising at half the coupling', () => {
    const read = ['up', 'up', 'up', 'up', 'up', 'up', 'down', 'down', 'down']; // k = 9, N = 10
    const p = 1 / (1 + Math.exp((-2 * 2 * (6 - 3)) / 10 / 0.7));
    const draws = 6000;
    expectClose(
      frequencies(new SurrogateAgent(ising, spec('ising-meanfield', 2)), ['up', 'down'], 0.7, update(ising.question, read), draws),
      [p, 1 - p],
      draws,
    );
    // potts at J = 2 on two states draws exactly as ising at J = 1 (K = 2 either way).
    const [a, b] = [new SurrogateAgent(ising, spec('potts', 2)), new SurrogateAgent(ising, spec('ising', 1))];
    for (let seed = 0; seed < 300; seed++)
      expect(a.respond(seed, 1.3, update(ising.question, read))).toBe(b.respond(seed, 1.3, update(ising.question, read)));
  });

  it('T = 0 takes the majority state (ties uniformly); t = 0 is a hot start, uniform over the q states', () => {
    const agent = new SurrogateAgent(potts3, spec('potts'));
    for (let seed = 0; seed < 100; seed++) expect(agent.respond(seed, 0, update(potts3.question, ['blue', 'blue', 'red']))).toBe('blue');
    const ties = new Set(Array.from({ length: 100 }, (_, seed) => agent.respond(seed, 0, update(potts3.question, ['blue', 'green']))));
    expect([...ties].sort()).toEqual(['blue', 'green']);
    const start = { question: potts3.question, sweep: 0, temperature: 0, neighbourAgents: [], neighbourAnswers: [] };
    const draws = 6000;
    expectClose(frequencies(agent, ['red', 'green', 'blue'], 0, start, draws), [1 / 3, 1 / 3, 1 / 3], draws);
  });

  it('initial: ordered (a cold start): t = 0 is the same hot draw, sweep 1 sets every spin to state 0, later sweeps are heat-bath', () => {
    const [hot, cold] = [new SurrogateAgent(potts3, spec('potts', 1)), new SurrogateAgent(potts3, spec('potts', 1, 'ordered'))];
    const start = { question: potts3.question, sweep: 0, temperature: 1, neighbourAgents: [], neighbourAnswers: [] };
    for (let seed = 0; seed < 100; seed++) expect(cold.respond(seed, 1, start)).toBe(hot.respond(seed, 1, start));
    // Sweep 1 reads four blue neighbours at T = 0.1 (heat-bath: blue almost surely); the cold start answers red.
    const first = update(potts3.question, ['blue', 'blue', 'blue', 'blue'], 'green');
    for (let seed = 0; seed < 100; seed++) {
      expect(cold.respond(seed, 0.1, first)).toBe('red');
      expect(hot.respond(seed, 0.1, first)).toBe('blue');
    }
    const later = { ...first, sweep: 2 };
    for (let seed = 0; seed < 100; seed++) expect(cold.respond(seed, 0.1, later)).toBe(hot.respond(seed, 0.1, later));
  });

  it('a prompt with one state, or states the judge cannot tell apart, is refused naming the prompt', () => {
    const lone = { ...ising, id: 'lone', false_answers: [] };
    expect(() => new SurrogateAgent(lone, spec('ising'))).toThrow(/prompt lone has no false answer/);
    const nested = { ...ising, id: 'nested', accepted: ['up'], false_answers: ['up high'] };
    expect(() => new SurrogateAgent(nested, spec('potts'))).toThrow(/prompt nested's state "up high" does not read back/);
    // A dataset prompt with several false answers: ising plays the first two states only.
    const agent = new SurrogateAgent(rheon[3]!, spec('ising'));
    const replies = new Set(Array.from({ length: 50 }, (_, seed) => agent.respond(seed, 5, update(rheon[3]!.question, []))));
    expect([...replies].sort()).toEqual([rheon[3]!.accepted[0], rheon[3]!.false_answers[0]].sort());
  });
});
