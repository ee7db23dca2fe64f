import { classifyAnswer, type Prompt, type PromptContext, rngFrom } from '@panta/core';
import type { AgentHooks, AgentView } from '../../scenario.js';

/**
 * An exact heat-bath (Glauber) update of a q-state Potts or Ising spin: the agent's answer is one of q fixed
 * strings, the prompt's first accepted answer (state 0) and its known false answers (states 1..q-1), each
 * written as the bare phrase. At an update it reads the states of its neighbours' answers (never its own
 * previous one), counts n_s, the neighbours in state s, and draws its new state with probability
 *
 *   p(s) = exp(K n_s / T) / sum_r exp(K n_r / T),
 *
 * where T is the call's temperature, J the backend's `coupling` and K depends on the convention:
 * - ising (q = 2: the first accepted and the first false answer): E = -J sum_<ij> s_i s_j with s = +1 / -1,
 *   so flipping one spin changes the energy by 2 J (n_same - n_other) and K = 2 J. Onsager's square lattice
 *   (torus2d) orders at T_c = 2 / ln(1 + sqrt 2) J = 2.269 J; the simple cubic lattice at 4.5115 J.
 * - potts (q = 1 + the prompt's false answers): E = -J sum_<ij> delta(s_i, s_j), K = J; the square lattice
 *   orders at T_c = 1 / ln(1 + sqrt q) J (0.995 J for q = 3). With q = 2 this is the Ising model at half the
 *   coupling: T_c = 1.135 J, half of Onsager's value.
 * - the -meanfield variants divide K by N = k + 1 (k: the answers read), the Curie-Weiss normalisation
 *   E = -(J / N) sum_{i<j}: on the full mean field (every other agent read) ising-meanfield orders at
 *   T_c = J, potts-meanfield with q = 2 at J / 2 (and with q = 3 at J / (4 ln 2), a first-order transition).
 * T = 0 draws uniformly among the states with the most neighbours. At t = 0 (no previous answer, nothing
 * read) the state is uniform over the q states: a hot start. With the backend's `initial: ordered` (a cold
 * start) every update of the first sweep answers state 0 whatever it reads (asynchronous picks reach about
 * 1 - 1/e of the agents: one ordered domain, no walls to coarsen), and the heat-bath draws run from there; the
 * t = 0 answers stay the hot draw, the pool whitening is fitted on. An answer that is none of the q states (another
 * model's, a "not known") is not counted. The draw is a pure function of (seed, the answers read), so a run
 * resumes and shards exactly. The answers are fixed strings, so with two states whitening maps them to two
 * antipodal spins and m is the Ising magnetisation |M| / N.
 */
export interface HeatBathRule {
  /** ising: K = 2 J and q = 2; potts: K = J and q = 1 + false answers. */
  readonly ising: boolean;
  /** Divide K by N = k + 1, the Curie-Weiss normalisation. */
  readonly meanField: boolean;
}

/** The q state strings of a prompt under a rule; throws, naming the prompt, when it has too few or they do not read back. */
export function heatBathStates(prompt: Prompt, rule: HeatBathRule): string[] {
  const states = [prompt.accepted[0]!, ...prompt.false_answers];
  if (states.length < 2) {
    throw new Error(
      `surrogate heat-bath scenario: prompt ${prompt.id} has no false answer, so it has one state only; give it at least one false answer (a second state)`,
    );
  }
  const out = rule.ising ? states.slice(0, 2) : states;
  out.forEach((text, s) => {
    const c = classifyAnswer(prompt, text);
    const read = c.kind === 'correct' ? 0 : c.kind === 'false' ? 1 + c.index : -1;
    if (read !== s) {
      throw new Error(
        `surrogate heat-bath scenario: prompt ${prompt.id}'s state ${JSON.stringify(text)} does not read back as itself; use answers no other answer contains`,
      );
    }
  });
  return out;
}

/** The hooks of one prompt: its reply is the heat-bath draw, worded as the bare state string. */
export function heatBathHooks(prompt: Prompt, rule: HeatBathRule): AgentHooks {
  const states = heatBathStates(prompt, rule);
  const q = states.length;
  const index = new Map(states.map((text, s) => [text, s]));
  const counts = new Float64Array(q);
  const weights = new Float64Array(q);
  return {
    reply(agent: AgentView, seed: number, temperature: number, context: PromptContext): string {
      const rng = rngFrom(seed, 'heat-bath');
      if (context.previous === undefined) return states[rng.int(q)]!;
      // The cold start: every update of the first sweep answers state 0 (t = 0 stays the hot draw, the whitening pool).
      if (context.sweep === 1 && agent.spec.initial === 'ordered') return states[0]!;
      counts.fill(0);
      const read = context.neighbourAnswers;
      for (const text of read) {
        let s = index.get(text);
        if (s === undefined) {
          // Not a bare state string: read as the reference judge reads it.
          const option = agent.optionOf(text);
          s = option < q ? option : -1;
        }
        if (s >= 0) counts[s]! += 1;
      }
      let k = (rule.ising ? 2 : 1) * agent.spec.coupling;
      if (rule.meanField) k /= read.length + 1;
      return states[heatBathDraw(counts, k, temperature, rng.next(), weights)]!;
    },
  };
}

/**
 * The state drawn with probability proportional to exp(k n_s / T) for uniform u in [0, 1); T = 0: uniform
 * among the states with the largest n_s. `weights` is scratch (length q).
 */
export function heatBathDraw(counts: Float64Array, k: number, temperature: number, u: number, weights: Float64Array): number {
  const q = counts.length;
  let max = -Infinity;
  for (let s = 0; s < q; s++) max = Math.max(max, counts[s]!);
  let total = 0;
  for (let s = 0; s < q; s++) {
    const x = temperature > 0 ? (k * (counts[s]! - max)) / temperature : counts[s] === max || k === 0 ? 0 : -Infinity;
    weights[s] = Math.exp(x);
    total += weights[s]!;
  }
  let x = u * total;
  for (let s = 0; s < q; s++) {
    x -= weights[s]!;
    if (x < 0) return s;
  }
  return q - 1;
}

/** The probabilities heatBathDraw draws from (for tests and for readers): p(s) for each state. */
export function heatBathProbabilities(counts: readonly number[], k: number, temperature: number): number[] {
  const c = Float64Array.from(counts);
  const w = new Float64Array(c.length);
  heatBathDraw(c, k, temperature, 0, w);
  const total = w.reduce((a, b) => a + b, 0);
  return Array.from(w, (x) => x / total);
}
