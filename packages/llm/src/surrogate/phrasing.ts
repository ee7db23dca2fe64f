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

/** Index in [0, count) drawn with weight exp(-i / (2 T)); T = 0 always gives 0. */
export function pickVaried(count: number, temperature: number, u: number): number {
  if (count <= 1 || temperature <= 0) return 0;
  let total = 0;
  const weights: number[] = [];
  for (let i = 0; i < count; i++) {
    const w = Math.exp(-i / (2 * temperature));
    weights.push(w);
    total += w;
  }
  let x = u * total;
  for (let i = 0; i < count; i++) {
    x -= weights[i]!;
    if (x < 0) return i;
  }
  return count - 1;
}
