import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '@panta/core';

/** Where an error is reported: the spec file and field (`encoders[i].path`), or the model folder itself. */
export interface ErrorPlace {
  file: string;
  field: string;
}

/** The files of a sentence-transformers ONNX export, all absolute paths. */
export interface ModelFolder {
  dir: string;
  model: string;
  tokenizer: string;
  tokenizerConfig: string;
  /** config.json (optional): `max_position_embeddings` caps the sequence length. */
  config?: string;
  /** sentence_bert_config.json (optional): `max_seq_length` as sentence-transformers uses it. */
  sentenceBertConfig?: string;
}

/** The tensor metadata the signature check needs (a subset of onnxruntime's ValueMetadata). */
export interface TensorInfo {
  name: string;
  isTensor: boolean;
  type?: string;
  shape?: readonly (number | string)[];
}

export interface ModelSignature {
  dim: number;
  /** Input names the model takes, in the subset input_ids, attention_mask, token_type_ids. */
  inputs: string[];
}

export const EXPORT_FIX =
  'export the model with optimum (optimum-cli export onnx --model sentence-transformers/all-MiniLM-L6-v2 DIR) or download a sentence-transformers ONNX export (panta models)';

export const REQUIRED_INPUTS = ['input_ids', 'attention_mask'] as const;
export const OPTIONAL_INPUTS = ['token_type_ids'] as const;
export const OUTPUT_NAME = 'last_hidden_state';

/**
 * Finds the files of a model folder (`model.onnx` or `onnx/model.onnx`, `tokenizer.json`,
 * `tokenizer_config.json`, optional `config.json`). Only looks at the local disk.
 */
export function inspectModelFolder(dir: string, place?: ErrorPlace): ModelFolder {
  const abs = resolve(dir);
  const fail = (file: string, problem: string, fix: string): never => {
    throw new InputError(place?.file ?? file, place?.field ?? '', problem, fix);
  };
  if (!existsSync(abs) || !statSync(abs).isDirectory())
    fail(
      abs,
      `model folder ${abs} does not exist or is not a folder`,
      'point path at a folder holding model.onnx (or onnx/model.onnx), tokenizer.json and tokenizer_config.json',
    );
  const candidates = [join(abs, 'model.onnx'), join(abs, 'onnx', 'model.onnx')];
  const model = candidates.find((p) => existsSync(p) && statSync(p).isFile());
  if (!model) fail(candidates[0], `no model file: neither ${candidates[0]} nor ${candidates[1]} exists`, EXPORT_FIX);
  const tokenizer = join(abs, 'tokenizer.json');
  if (!existsSync(tokenizer))
    fail(
      tokenizer,
      `${tokenizer} is missing (the model folder needs its tokenizer)`,
      `copy tokenizer.json from the model's Hugging Face repository into ${abs}`,
    );
  const tokenizerConfig = join(abs, 'tokenizer_config.json');
  if (!existsSync(tokenizerConfig))
    fail(
      tokenizerConfig,
      `${tokenizerConfig} is missing (it names the special tokens and model_max_length)`,
      `copy tokenizer_config.json from the model's Hugging Face repository into ${abs}`,
    );
  const folder: ModelFolder = { dir: abs, model: model!, tokenizer, tokenizerConfig };
  const config = join(abs, 'config.json');
  if (existsSync(config)) folder.config = config;
  const sbert = join(abs, 'sentence_bert_config.json');
  if (existsSync(sbert)) folder.sentenceBertConfig = sbert;
  return folder;
}

/**
 * Checks a loaded session's inputs and outputs against a sentence-transformers BERT export: int64
 * `input_ids` and `attention_mask` (and `token_type_ids` when taken), a float32 rank-3 `last_hidden_state`.
 * Returns the embedding dimension when the last axis is fixed (0 when symbolic: probe it).
 */
export function checkSignature(
  modelPath: string,
  inputs: readonly TensorInfo[],
  outputs: readonly TensorInfo[],
  place?: ErrorPlace,
): ModelSignature {
  const fail = (problem: string, fix = EXPORT_FIX): never => {
    throw new InputError(place?.file ?? modelPath, place?.field ?? '', problem, fix);
  };
  const names = inputs.map((i) => i.name);
  for (const need of REQUIRED_INPUTS) {
    if (!names.includes(need)) fail(`${modelPath} has no input ${need} (inputs: ${names.join(', ') || 'none'})`);
  }
  const known = new Set<string>([...REQUIRED_INPUTS, ...OPTIONAL_INPUTS]);
  for (const input of inputs) {
    if (!known.has(input.name))
      fail(`${modelPath} takes an unexpected input ${input.name} (expected input_ids, attention_mask, token_type_ids)`);
    if (input.isTensor && input.type !== undefined && input.type !== 'int64')
      fail(`${modelPath} input ${input.name} has dtype ${input.type}, expected int64`);
    if (input.shape && input.shape.length > 0 && input.shape.length !== 2)
      fail(`${modelPath} input ${input.name} has rank ${input.shape.length}, expected 2 ([batch, sequence])`);
  }
  const out = outputs.find((o) => o.name === OUTPUT_NAME);
  if (!out) fail(`${modelPath} has no output ${OUTPUT_NAME} (outputs: ${outputs.map((o) => o.name).join(', ') || 'none'})`);
  if (out!.isTensor && out!.type !== undefined && out!.type !== 'float32')
    fail(`${modelPath} output ${OUTPUT_NAME} has dtype ${out!.type}, expected float32`);
  const shape = out!.shape ?? [];
  if (shape.length > 0 && shape.length !== 3)
    fail(`${modelPath} output ${OUTPUT_NAME} has rank ${shape.length}, expected 3 ([batch, sequence, dim])`);
  const last = shape[2];
  return { dim: typeof last === 'number' && last > 0 ? last : 0, inputs: names };
}
