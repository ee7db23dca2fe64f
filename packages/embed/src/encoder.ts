/** A sentence encoder: texts in, unit vectors of a fixed dimension out (one `emb_<name>` column). */
export interface Encoder {
  readonly name: string;
  readonly dim: number;
  /** Model identity recorded in the manifest. */
  readonly model: string;
  encode(texts: readonly string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}
