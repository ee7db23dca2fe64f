/**
 * How the surrogate words its answer. Sentence frames are ordered from plainest to most elaborate; the
 * agent picks frame i with weight exp(-i / (2 T)), so low temperatures repeat the plain frame and high
 * ones vary. No frame may contain an answer phrase of any prompt: the judge must read back exactly the
 * option the agent chose.
 */
export const ANSWER_FRAMES = [
  'The answer is {a}.',
  'I believe the answer is {a}.',
  'My answer: {a}.',
  'Having weighed the other answers, I would say {a}.',
  'It should be {a}.',
  'As far as I can tell, {a}.',
  'Most likely {a}, on reflection.',
  'I am fairly confident it is {a}.',
  'After checking again: {a}.',
  'Probably {a}, though I could be wrong.',
] as const;

export const NOT_KNOWN_FRAMES = [
  'I am not sure.',
  'I cannot answer that with confidence.',
  'I lack the information to answer.',
  'Honestly, I am unsure what the right answer is.',
  'I would rather not guess.',
  'That is beyond what I can say reliably.',
] as const;

/** Weights exp(-i / (2 T)) and their sum, per (count, T): computed once, not on every reply. */
const weightCache = new Map<number, Map<number, { weights: number[]; total: number }>>();

function variedWeights(count: number, temperature: number): { weights: number[]; total: number } {
  let byT = weightCache.get(count);
  if (!byT) weightCache.set(count, (byT = new Map()));
  let w = byT.get(temperature);
  if (!w) {
    // Summed one term at a time in index order: another order would round differently and change the draws.
    let total = 0;
    const weights: number[] = [];
    for (let i = 0; i < count; i++) {
      const x = Math.exp(-i / (2 * temperature));
      weights.push(x);
      total += x;
    }
    w = { weights, total };
    if (byT.size < 1024) byT.set(temperature, w);
  }
  return w;
}

/** Index in [0, count) drawn with weight exp(-i / (2 T)); T = 0 always gives 0. */
export function pickVaried(count: number, temperature: number, u: number): number {
  if (count <= 1 || temperature <= 0) return 0;
  const { weights, total } = variedWeights(count, temperature);
  let x = u * total;
  for (let i = 0; i < count; i++) {
    x -= weights[i];
    if (x < 0) return i;
  }
  return count - 1;
}
