import { basename } from 'node:path';
import type * as Ort from 'onnxruntime-node';
import { InputError } from '@panta/core';
import { sha256File } from './onnx/encoder.js';
import { checkSignature, type ErrorPlace, inspectModelFolder } from './onnx/model-folder.js';
import type { OnnxTokenizer } from './onnx/tokenize.js';

/**
 * BERTScore (Zhang, Kishore, Wu, Weinberger, Artzi. "BERTScore: Evaluating Text Generation with BERT", ICLR 2020):
 * each token of the candidate and of the reference is a contextual embedding (an encoder's last_hidden_state,
 * never pooled); every candidate token is matched greedily to its most similar reference token (cosine) and
 * the other way round. Precision = the weighted mean over candidate tokens of their best cosine, recall = the
 * same over reference tokens, F1 their harmonic mean. Weights are 1 per token, or idf over the references
 * (`idf`), the special tokens ([CLS], [SEP], <s>, </s>) weighing nothing, as the authors' code does. With a
 * `baseline` b the three are rescaled as (s - b) / (1 - b) (the paper's baseline rescaling; b is the model's
 * score on unrelated text pairs, which the user gives). Several references: the one with the highest F1.
 */
export interface BertScore {
  precision: number;
  recall: number;
  f1: number;
}

/** One text's token embeddings (special tokens dropped) and their token ids. */
export interface TokenEmbeddings {
  ids: number[];
  vectors: Float32Array[];
}

function unit(v: ArrayLike<number>): Float64Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  const inv = n > 0 ? 1 / Math.sqrt(n) : 0;
  return Float64Array.from(v, (x) => x * inv);
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/**
 * Greedy matching (BERTScore's core) of candidate and reference token vectors, each weighted (default 1).
 * A side without tokens, or whose weights sum to 0, scores 0 (as the authors' code does for an empty text).
 */
export function greedyMatch(
  candidate: readonly ArrayLike<number>[],
  reference: readonly ArrayLike<number>[],
  candidateWeights?: readonly number[],
  referenceWeights?: readonly number[],
): BertScore {
  const c = candidate.map(unit);
  const r = reference.map(unit);
  if (c.length === 0 || r.length === 0) return { precision: 0, recall: 0, f1: 0 };
  const sim = c.map((x) => r.map((y) => dot(x, y)));
  const weighted = (best: number[], w: readonly number[] | undefined) => {
    let num = 0;
    let den = 0;
    best.forEach((b, i) => {
      const wi = w?.[i] ?? 1;
      num += wi * b;
      den += wi;
    });
    return den > 0 ? num / den : 0;
  };
  const precision = weighted(
    sim.map((row) => Math.max(...row)),
    candidateWeights,
  );
  const recall = weighted(
    r.map((_, j) => Math.max(...sim.map((row) => row[j]))),
    referenceWeights,
  );
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, f1 };
}

/**
 * BERTScore's idf over a set of reference texts (token ids, special tokens dropped): idf(w) = ln((M + 1) / (df(w) + 1)),
 * M the number of references, df(w) how many contain w; a token in none weighs ln(M + 1).
 */
export function idfWeights(references: readonly (readonly number[])[]): (id: number) => number {
  const df = new Map<number, number>();
  for (const ids of references) for (const id of new Set(ids)) df.set(id, (df.get(id) ?? 0) + 1);
  const m = references.length;
  return (id) => Math.log((m + 1) / ((df.get(id) ?? 0) + 1));
}

/** The baseline rescaling: (s - b) / (1 - b). */
export function rescale(score: BertScore, baseline: number): BertScore {
  const r = (s: number) => (s - baseline) / (1 - baseline);
  return { precision: r(score.precision), recall: r(score.recall), f1: r(score.f1) };
}

/** What to score with: an ONNX model folder (a contextual encoder: last_hidden_state), idf, a baseline. */
export interface BertScoreOptions {
  /** The model folder (model.onnx with last_hidden_state, tokenizer.json, tokenizer_config.json). */
  path: string;
  idf?: boolean;
  baseline?: number;
  /** Where a bad folder is reported (the spec file and field). */
  place?: ErrorPlace;
}

/**
 * onnxruntime-node and the tokenizer's package, loaded by the first scorer opened rather than with this package:
 * their native bindings cost every `panta` process and every test file ~50 ms of CPU at start, and only a
 * BERTScore (a study's finish-time metric) runs a model in this thread.
 */
type Runtime = { ort: typeof Ort; tokenize: typeof import('./onnx/tokenize.js') };
let runtime: Promise<Runtime> | undefined;
function loadRuntime(): Promise<Runtime> {
  runtime ??= Promise.all([import('onnxruntime-node'), import('./onnx/tokenize.js')]).then(([ort, tokenize]) => ({ ort, tokenize }));
  return runtime;
}

/**
 * BERTScore on an ONNX encoder, run with onnxruntime in this thread (scoring is a finish-time and verify-time
 * step, not on the sweep's hot path). `model` names the folder and the .onnx file's sha256 prefix.
 */
export class BertScorer {
  private constructor(
    private readonly rt: Runtime,
    private readonly session: Ort.InferenceSession,
    private readonly tokenizer: OnnxTokenizer,
    private readonly takesTokenTypes: boolean,
    /** How many special tokens the tokenizer puts before and after a text's tokens. */
    private readonly specials: { head: number; tail: number },
    readonly model: string,
    readonly options: BertScoreOptions,
  ) {}

  static async open(options: BertScoreOptions): Promise<BertScorer> {
    const folder = inspectModelFolder(options.path, options.place);
    const rt = await loadRuntime();
    const { ort } = rt;
    let session: Ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(folder.model, { logSeverityLevel: 3 });
    } catch (error) {
      throw new InputError(
        options.place?.file ?? folder.model,
        options.place?.field ?? '',
        `${folder.model} is not a loadable ONNX model (${(error as Error).message.split('\n')[0]})`,
        'name the folder of an ONNX export whose output is last_hidden_state (optimum-cli export onnx --model MODEL DIR)',
      );
    }
    const meta = (list: readonly Ort.InferenceSession.ValueMetadata[]) =>
      list.map((m) =>
        m.isTensor ? { name: m.name, isTensor: true, type: m.type, shape: [...m.shape] } : { name: m.name, isTensor: false },
      );
    const sig = checkSignature(folder.model, meta(session.inputMetadata), meta(session.outputMetadata), options.place);
    const tokenizer = rt.tokenize.OnnxTokenizer.load(folder, options.place);
    const empty = tokenizer.ids('');
    const probe = tokenizer.ids('probe');
    const head = empty.length === 0 ? 0 : probe[0] === empty[0] ? 1 : 0;
    const digest = await sha256File(folder.model);
    return new BertScorer(
      rt,
      session,
      tokenizer,
      sig.inputs.includes('token_type_ids'),
      { head, tail: empty.length - head },
      `${basename(folder.dir)}@sha256:${digest.slice(0, 12)}`,
      options,
    );
  }

  /** Each text's token embeddings (last_hidden_state rows), special tokens dropped. */
  async embed(texts: readonly string[]): Promise<TokenEmbeddings[]> {
    const { ort, tokenize } = this.rt;
    const out: TokenEmbeddings[] = [];
    for (const text of texts) {
      const ids = this.tokenizer.ids(text);
      const batch = tokenize.padBatch([ids], this.tokenizer.padId);
      const shape = [1, batch.seqLen];
      const feeds: Record<string, Ort.Tensor> = {
        input_ids: new ort.Tensor('int64', batch.inputIds, shape),
        attention_mask: new ort.Tensor('int64', batch.attentionMask, shape),
      };
      if (this.takesTokenTypes) feeds.token_type_ids = new ort.Tensor('int64', batch.tokenTypeIds, shape);
      const result = await this.session.run(feeds, ['last_hidden_state']);
      const hidden = result.last_hidden_state!;
      const dim = hidden.dims[2];
      const data = hidden.data as Float32Array;
      const vectors: Float32Array[] = [];
      const kept: number[] = [];
      for (let t = this.specials.head; t < ids.length - this.specials.tail; t++) {
        vectors.push(data.slice(t * dim, (t + 1) * dim));
        kept.push(ids[t]);
      }
      hidden.dispose?.();
      out.push({ ids: kept, vectors });
    }
    return out;
  }

  /**
   * BERTScore of each candidate against its references (pairs[i] = [candidate, references]); idf, when asked for,
   * is over every reference of the call, as the authors' code computes it over the references it is given.
   */
  async score(pairs: readonly (readonly [string, readonly string[]])[]): Promise<BertScore[]> {
    const refTexts = [...new Set(pairs.flatMap(([, refs]) => refs))];
    const refs = new Map((await this.embed(refTexts)).map((e, i) => [refTexts[i], e]));
    const idf = this.options.idf ? idfWeights([...refs.values()].map((e) => e.ids)) : undefined;
    const weights = (e: TokenEmbeddings) => (idf ? e.ids.map(idf) : undefined);
    const out: BertScore[] = [];
    for (const [candidate, references] of pairs) {
      const [c] = await this.embed([candidate]);
      let best: BertScore | null = null;
      for (const ref of references) {
        const r = refs.get(ref)!;
        const s = greedyMatch(c.vectors, r.vectors, weights(c), weights(r));
        if (best === null || s.f1 > best.f1) best = s;
      }
      const s = best ?? { precision: 0, recall: 0, f1: 0 };
      out.push(this.options.baseline === undefined ? s : rescale(s, this.options.baseline));
    }
    return out;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
