import type { TopLevelSpec } from 'vega-lite';

/** A figure of the report: a Vega-Lite spec (data inlined) with the words that go with it. */
export interface Figure {
  /** File stem under figures/ (`magnetisation-hashing`). */
  id: string;
  title: string;
  caption: string;
  spec: TopLevelSpec;
}
