/**
 * An encoder's vector is checked once, where it is made: a NaN, an infinite value or an all-zero vector would
 * not fail later, it would bend every order parameter of the answer's snapshots (a NaN spin makes m NaN; a
 * zero spin pulls m and q towards 0). The shipped encoders never give one on model output (the hashing
 * encoder maps every text, "" included, to a unit vector; onnx encoders pool over at least the special
 * tokens), so this fires only on a broken model or export, and says which encoder and which text.
 */
export function checkEmbedding(encoder: string, text: string, v: ArrayLike<number>): void {
  let zero = true;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (!Number.isFinite(x))
      throw new Error(
        `encoder ${encoder}: ${problem(x)} at dimension ${i} of the embedding of ${describe(text)}; fix: check the encoder's model files (a re-export usually cures it), or use another encoder`,
      );
    if (x !== 0) zero = false;
  }
  if (zero)
    throw new Error(
      `encoder ${encoder}: an all-zero embedding of ${describe(text)}; fix: check the encoder's model files (a re-export usually cures it), or use another encoder`,
    );
}

function problem(x: number): string {
  return Number.isNaN(x) ? 'NaN' : `an infinite value (${x})`;
}

function describe(text: string): string {
  const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}...` : text);
  return `the ${text.length}-character text ${shown}`;
}

/** Checks a batch: texts[i] gave vectors[i]. */
export function checkEmbeddings<T extends ArrayLike<number>>(encoder: string, texts: readonly string[], vectors: T[]): T[] {
  for (let i = 0; i < vectors.length; i++) checkEmbedding(encoder, texts[i] ?? '', vectors[i]);
  return vectors;
}
