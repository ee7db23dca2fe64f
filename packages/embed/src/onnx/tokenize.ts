import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { InputError } from '@panta/core';
import type { ErrorPlace, ModelFolder } from './model-folder.js';

/** A padded batch: row-major [batch, seqLen] int64 tensors. */
export interface TokenBatch {
  batch: number;
  seqLen: number;
  inputIds: BigInt64Array;
  attentionMask: BigInt64Array;
  tokenTypeIds: BigInt64Array;
}

/** Sequence length used when neither the tokenizer nor the config gives a usable one. */
export const DEFAULT_MAX_LENGTH = 512;

function readJson(path: string, place: ErrorPlace | undefined, what: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InputError(
      place?.file ?? path,
      place?.field ?? '',
      `cannot read ${path} (${(error as Error).message})`,
      `restore ${what} in the model folder`,
    );
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Record<string, unknown>;
  } catch (error) {
    throw new InputError(
      place?.file ?? path,
      place?.field ?? '',
      `${path} is not valid JSON (${(error as Error).message})`,
      `restore ${what} from the model's Hugging Face repository`,
    );
  }
}

function positive(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : undefined;
}

function tokenString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && typeof (v as { content?: unknown }).content === 'string')
    return (v as { content: string }).content;
  return undefined;
}

/**
 * The tokenizer of a model folder, loaded from tokenizer.json and tokenizer_config.json only (no network).
 * Truncates to the model's max length (keeping the final special token, [SEP] or </s>) and pads to the
 * longest sequence of the batch.
 */
export class OnnxTokenizer {
  private constructor(
    private readonly tokenizer: Tokenizer,
    readonly maxLength: number,
    readonly padId: number,
  ) {}

  /**
   * Max length: tokenizer_config `model_max_length`, capped by sentence_bert_config `max_seq_length` and
   * config.json `max_position_embeddings`, and by `override` when given.
   */
  static load(folder: ModelFolder, place?: ErrorPlace, override?: number): OnnxTokenizer {
    const json = readJson(folder.tokenizer, place, 'tokenizer.json');
    const config = readJson(folder.tokenizerConfig, place, 'tokenizer_config.json');
    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(json, config);
      tokenizer.encode('probe');
    } catch (error) {
      throw new InputError(
        place?.file ?? folder.tokenizer,
        place?.field ?? '',
        `${folder.tokenizer} does not load as a tokenizer (${(error as Error).message})`,
        "restore tokenizer.json from the model's Hugging Face repository",
      );
    }
    const limits: number[] = [];
    const mml = positive(config.model_max_length);
    if (mml !== undefined && mml < 1e9) limits.push(mml);
    if (folder.sentenceBertConfig) {
      const s = positive(readJson(folder.sentenceBertConfig, place, 'sentence_bert_config.json').max_seq_length);
      if (s !== undefined) limits.push(s);
    }
    if (folder.config) {
      const p = positive(readJson(folder.config, place, 'config.json').max_position_embeddings);
      if (p !== undefined) limits.push(p);
    }
    if (override !== undefined) limits.push(override);
    const maxLength = limits.length > 0 ? Math.min(...limits) : DEFAULT_MAX_LENGTH;
    const padToken = tokenString(config.pad_token);
    let padId = padToken !== undefined ? tokenizer.token_to_id(padToken) : undefined;
    if (padId === undefined) {
      const padding = json.padding as { pad_id?: unknown } | null | undefined;
      padId = typeof padding?.pad_id === 'number' ? padding.pad_id : 0;
    }
    return new OnnxTokenizer(tokenizer, maxLength, padId);
  }

  /** Token ids of one text with special tokens, truncated to maxLength (the final token is kept). */
  ids(text: string): number[] {
    const ids = this.tokenizer.encode(text).ids;
    if (ids.length <= this.maxLength) return ids;
    const out = ids.slice(0, this.maxLength - 1);
    out.push(ids[ids.length - 1]);
    return out;
  }

  encodeBatch(texts: readonly string[]): TokenBatch {
    return padBatch(
      texts.map((t) => this.ids(t)),
      this.padId,
    );
  }
}

/** Pads token id rows to the longest row; attention mask 1 on tokens, token_type_ids all zeros. */
export function padBatch(rows: readonly (readonly number[])[], padId: number, seqLen?: number): TokenBatch {
  const batch = rows.length;
  const len = Math.max(seqLen ?? 0, 1, ...rows.map((r) => r.length));
  const inputIds = new BigInt64Array(batch * len).fill(BigInt(padId));
  const attentionMask = new BigInt64Array(batch * len);
  rows.forEach((row, b) => {
    for (let j = 0; j < row.length; j++) {
      inputIds[b * len + j] = BigInt(row[j]);
      attentionMask[b * len + j] = 1n;
    }
  });
  return { batch, seqLen: len, inputIds, attentionMask, tokenTypeIds: new BigInt64Array(batch * len) };
}
