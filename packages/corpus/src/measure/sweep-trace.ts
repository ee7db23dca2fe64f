import { TAGS, type EncoderColumn, type Tag } from '@panta/core';
import { VectorCache } from './keyed.js';

/**
 * What the order parameters need of a sweep's answers, kept while its runs are written, so that measuring
 * the sweep need not read every embedding back from the shards.
 *
 * Why: reading every answer's embedding back out of Parquet decodes a FLOAT[d] list value by value, a
 * large share of a fast sweep's time (bench/NOTES.md: the sweep trace). The collector already holds each answer as it writes it. Per answer the trace keeps its agent, sweep and tag and, per
 * encoder, the id of its vector in a store of the prompt's distinct vectors (equal answers embed equally,
 * so a population holds few distinct vectors): about 10 bytes per event plus the distinct vectors.
 *
 * It is an accelerator, never a second truth. A run is measured from its trace only when the trace holds
 * every answer of the finalized shard (it was written from event 0 by this process; see seal); any other
 * run is read back, and the two paths give the same numbers bit for bit (same vectors, visited in the
 * same order). Memory is bounded: past `budgetBytes` the whole trace is dropped and every run is read back.
 */
export class SweepTrace {
  private readonly stores = new Map<string, VectorStore[]>();
  private readonly runs = new Map<string, RunTrace>();
  private bytes = 0;
  private dropped = false;

  /** @param onDropped told once, when the budget is exceeded and the trace is given up. */
  constructor(
    readonly encoders: readonly EncoderColumn[],
    private readonly budgetBytes: number,
    private readonly onDropped?: (bytes: number) => void,
  ) {}

  /** Starts recording a run written from its event 0 (an earlier attempt's trace is replaced). */
  start(runId: string, promptId: string): RunTrace | undefined {
    this.runs.delete(runId);
    if (this.dropped) return undefined;
    let stores = this.stores.get(promptId);
    if (!stores) this.stores.set(promptId, (stores = this.encoders.map((e) => new VectorStore(e.dim))));
    const trace = new RunTrace(this, stores);
    this.runs.set(runId, trace);
    return trace;
  }

  /** Forgets a run (resumed from durable parts, or failed): it will be read back. */
  forget(runId: string): void {
    this.runs.delete(runId);
  }

  /** The run's shard is finalized holding exactly `events` answers: its trace may stand in for it. */
  seal(runId: string, events: number): void {
    const trace = this.runs.get(runId);
    if (!trace) return;
    if (trace.length === events) trace.sealed = true;
    else this.runs.delete(runId);
  }

  /** A sealed run's trace, or undefined: read the run back. */
  sealed(runId: string): SealedRun | undefined {
    const trace = this.runs.get(runId);
    return trace?.sealed ? trace : undefined;
  }

  /** The prompt's distinct vectors of encoder `e` (the ids a sealed run's `vectorIds(e)` refer to). */
  vectors(promptId: string, e: number): readonly Float32Array[] {
    return this.stores.get(promptId)?.[e]?.vectors ?? [];
  }

  /** @internal A run trace grew by `bytes`. */
  grew(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes <= this.budgetBytes || this.dropped) return;
    this.dropped = true;
    const held = this.bytes;
    this.runs.clear();
    this.stores.clear();
    this.bytes = 0;
    this.onDropped?.(held);
  }

  /** @internal */
  get isDropped(): boolean {
    return this.dropped;
  }
}

/** A sealed run's answers in event order: agent, sweep, tag and per encoder a vector id. */
export interface SealedRun {
  readonly length: number;
  readonly agents: Int32Array;
  readonly sweeps: Int32Array;
  /** Index into TAGS. */
  readonly tags: Uint8Array;
  vectorIds(e: number): Int32Array;
}

const TAG_CODE = new Map<string, number>(TAGS.map((t, i) => [t, i]));

/** One run's answers, appended in event order by its collector. */
export class RunTrace implements SealedRun {
  length = 0;
  sealed = false;
  agents = new Int32Array(1024);
  sweeps = new Int32Array(1024);
  tags = new Uint8Array(1024);
  private ids: Int32Array[];

  constructor(
    private readonly owner: SweepTrace,
    private readonly stores: readonly VectorStore[],
  ) {
    this.ids = stores.map(() => new Int32Array(1024));
    owner.grew(this.capacityBytes());
  }

  /** Records the next answer (the collector calls it in event order, for each row the shard's writer took). */
  add(sweep: number, agent: number, tag: Tag, embeddings: Readonly<Record<string, Float32Array>> | null): void {
    if (this.owner.isDropped) return;
    const encoders = this.owner.encoders;
    if (this.length === this.agents.length) this.grow();
    const i = this.length++;
    this.agents[i] = agent;
    this.sweeps[i] = sweep;
    this.tags[i] = TAG_CODE.get(tag)!;
    for (let e = 0; e < this.stores.length; e++) {
      const store = this.stores[e];
      const before = store.vectors.length;
      this.ids[e][i] = store.idOf(embeddings![encoders[e].name]);
      if (store.vectors.length > before) this.owner.grew(store.vectorBytes);
    }
  }

  vectorIds(e: number): Int32Array {
    return this.ids[e];
  }

  private grow(): void {
    const before = this.capacityBytes();
    this.agents = doubled(this.agents);
    this.sweeps = doubled(this.sweeps);
    this.tags = doubled(this.tags);
    this.ids = this.ids.map(doubled);
    this.owner.grew(this.capacityBytes() - before);
  }

  private capacityBytes(): number {
    return this.agents.length * (9 + 4 * this.ids.length);
  }
}

/** A copy of `a` at twice its length (the rest zero). */
function doubled<T extends Int32Array | Uint8Array>(a: T): T {
  const b = new (a.constructor as new (length: number) => T)(a.length * 2);
  b.set(a);
  return b;
}

/** A prompt's distinct vectors of one encoder, each with a dense id in order of first sight. */
class VectorStore {
  readonly vectors: Float32Array[] = [];
  private readonly index = new VectorCache<number>(Number.POSITIVE_INFINITY);
  /** What one more vector costs: its floats and about 100 bytes of bookkeeping. */
  readonly vectorBytes: number;

  constructor(dim: number) {
    this.vectorBytes = 4 * dim + 100;
  }

  /**
   * Encoders hand out one array per distinct text (the hashing encoder memoises), and an answer's array is
   * never written to after it is returned (its row holds it until written): most answers are found by
   * identity, without hashing and comparing their floats. Only an array that spans its whole buffer can be
   * such a memoised answer: a view into a larger buffer (a collector's results decoded together, an ONNX
   * batch's rows) is never handed out twice, and remembering it would only cost the garbage collector an
   * entry per row (bench/NOTES.md: fewer objects per collected row).
   */
  private readonly seen = new WeakMap<Float32Array, number>();

  idOf(vector: Float32Array): number {
    const whole = vector.byteLength === vector.buffer.byteLength;
    let id = whole ? this.seen.get(vector) : undefined;
    if (id !== undefined) return id;
    id = this.index.getAt(vector, 0, vector.length, (copy) => {
      this.vectors.push(copy);
      return this.vectors.length - 1;
    });
    if (whole) this.seen.set(vector, id);
    return id;
  }
}
