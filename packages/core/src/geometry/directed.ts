import { CsrGraph } from './graph.js';

/** Directed relay: agent i reads [i - 1]; agent 0 reads nothing (k = 1). */
export function chainGraph(n: number, label = 'chain'): CsrGraph {
  const offsets = new Int32Array(n + 1);
  const targets = new Int32Array(n - 1);
  for (let i = 1; i < n; i++) {
    targets[i - 1] = i - 1;
    offsets[i + 1] = i;
  }
  return new CsrGraph(label, n, 1, offsets, targets, false);
}

/** Hub and spokes: hub 0 reads every leaf ascending, each leaf reads [0] (k = N - 1). */
export function starGraph(n: number, label = 'star'): CsrGraph {
  const offsets = new Int32Array(n + 1);
  const targets = new Int32Array(2 * (n - 1));
  for (let j = 1; j < n; j++) targets[j - 1] = j;
  offsets[1] = n - 1;
  for (let i = 1; i < n; i++) offsets[i + 1] = n - 1 + i; // targets[n - 2 + i] = 0 already
  return new CsrGraph(label, n, n - 1, offsets, targets);
}
