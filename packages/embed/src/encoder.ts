/** A sentence encoder: texts in, unit vectors of a fixed dimension out (one `emb_<name>` column). */
export interface Encoder {
  readonly name: string;
  readonly dim: number;
  /** Model identity recorded in the manifest. */
  readonly model: string;
  encode(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * The vector at once, for encoders that need no I/O (hashing): workers then skip a promise per answer.
   * Absent, or undefined for a text, means "use encode".
   */
  embedNow?(text: string): Float32Array | undefined;
  close(): Promise<void>;
}
