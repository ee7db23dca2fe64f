import { parse as parseYaml } from 'yaml';
import { InputError } from '../errors.js';
import { issueToInputError } from './parse.js';
import { encoderSchema, judgeSchema, type EncoderSpec, type JudgeSpec } from './schema.js';

/**
 * `panta embed --encoder NAME:KIND:PATH` as a spec's encoder: `hashing` takes a dimension (`mini:hashing:256`),
 * `onnx` a model folder (`l12:onnx:models/all-MiniLM-L12-v2`; the caller resolves it). Held to the spec's own
 * schema, so the same names and limits apply.
 */
export function parseEncoderArg(value: string): EncoderSpec {
  const fix = 'write NAME:hashing:DIM or NAME:onnx:MODEL_FOLDER, e.g. --encoder l12:onnx:models/all-MiniLM-L12-v2';
  const first = value.indexOf(':');
  const second = first < 0 ? -1 : value.indexOf(':', first + 1);
  if (first < 0 || second < 0) throw new InputError('--encoder', '', `${JSON.stringify(value)} is not NAME:KIND:PATH`, fix);
  const name = value.slice(0, first);
  const kind = value.slice(first + 1, second);
  const rest = value.slice(second + 1);
  let input: unknown;
  if (kind === 'hashing') {
    if (!/^\d+$/.test(rest)) throw new InputError('--encoder', 'dim', `${JSON.stringify(rest)} is not a dimension`, fix);
    input = { name, kind, dim: Number(rest) };
  } else if (kind === 'onnx') {
    if (!rest) throw new InputError('--encoder', 'path', 'no model folder given', fix);
    input = { name, kind, path: rest };
  } else throw new InputError('--encoder', 'kind', `${JSON.stringify(kind)} is not an encoder kind (hashing or onnx)`, fix);
  const parsed = encoderSchema.safeParse(input);
  if (!parsed.success) throw issueToInputError('--encoder', parsed.error.issues[0], input);
  return parsed.data;
}

/**
 * `panta judge --judge ...`'s text: a judge block in YAML or JSON (`{kind: llm, backend: {...}}`), or a sweep
 * spec whose `judge:` is used. `source` is what errors name (the file, or `--judge`).
 */
export function parseJudgeBlock(text: string, source: string): JudgeSpec {
  const fix = 'give a judge block such as {kind: llm, backend: {kind: openai, base_url: ..., model: ...}}, or a file holding one';
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new InputError(source, '', `not YAML or JSON (${(e as Error).message.split('\n')[0]})`, fix);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new InputError(source, '', 'not a judge block nor a file holding one', fix);
  // A sweep spec: its judge block, or the spec's default (the reference judge) when it names none.
  const fromSpec = !('kind' in doc) && ('judge' in doc || 'dataset' in doc);
  const block = fromSpec ? ((doc as { judge?: unknown }).judge ?? { kind: 'reference' }) : doc;
  const parsed = judgeSchema.safeParse(block);
  if (parsed.success) return parsed.data;
  const e = issueToInputError(source, parsed.error.issues[0], block);
  if (!fromSpec) throw e;
  throw new InputError(source, e.field ? `judge.${e.field}` : 'judge', e.problem, e.fix);
}
