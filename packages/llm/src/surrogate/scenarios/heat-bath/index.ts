import type { ScenarioModel } from '../../scenario.js';
import { type HeatBathRule, heatBathHooks } from './heat-bath.js';

/** A heat-bath spin model on every prompt (heat-bath.ts states the rule and its energy convention). */
function heatBath(about: string, rule: HeatBathRule): ScenarioModel {
  return { about, agent: (prompt) => heatBathHooks(prompt, rule) };
}

/** Ising spins, E = -J sum s_i s_j: the square lattice orders at 2.269 J (Onsager). */
export const ising = heatBath('exact heat-bath Ising spins (E = -J sum s_i s_j; square lattice T_c = 2.269 J)', {
  ising: true,
  meanField: false,
});

/** q-state Potts spins, E = -J sum delta(s_i, s_j): the square lattice orders at 1 / ln(1 + sqrt q) J. */
export const potts = heatBath('exact heat-bath q-state Potts spins (E = -J sum delta; square lattice T_c = J / ln(1 + sqrt q))', {
  ising: false,
  meanField: false,
});

/** Ising spins with the Curie-Weiss normalisation J / N: T_c = J on the full mean field. */
export const isingMeanField = heatBath('exact heat-bath Ising spins, Curie-Weiss coupling J / N (T_c = J on the mean field)', {
  ising: true,
  meanField: true,
});

/** Potts spins with the mean field's normalisation J / N. */
export const pottsMeanField = heatBath('exact heat-bath q-state Potts spins, mean-field coupling J / N', {
  ising: false,
  meanField: true,
});
