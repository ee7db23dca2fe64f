import { InputError, type EncoderSpec } from '@panta/core';
import type { Encoder } from './encoder.js';
import { HashingEncoder } from './hashing.js';
import { OnnxEncoder } from './onnx/encoder.js';

/**
 * Opens the encoder of `encoders[index]` of the spec `file`. Async: an onnx encoder loads its model in a
 * worker_thread first. Bad folders and devices reject with an InputError naming the spec field. `warn` takes
 * the one line an onnx encoder says about its device (on cuda, or cuda asked for and run on CPU); default stderr.
 */
export async function openEncoder(spec: EncoderSpec, file: string, index: number, warn?: (line: string) => void): Promise<Encoder> {
  if (spec.kind === 'onnx') return OnnxEncoder.open(spec, file, index, warn);
  return createEncoder(spec, file, index);
}

/**
 * Synchronous form for encoders that need no loading (hashing). An onnx spec throws: open it with
 * `await openEncoder(...)`.
 */
export function createEncoder(spec: EncoderSpec, file: string, index: number): Encoder {
  switch (spec.kind) {
    case 'hashing':
      return new HashingEncoder(spec.name, spec.dim);
    case 'onnx':
      throw new Error(
        `encoders[${index}] (${spec.name}) is an onnx encoder: it loads asynchronously, open it with await openEncoder(spec, file, index)`,
      );
    default:
      throw new InputError(
        file,
        `encoders[${index}].kind`,
        `the ${(spec as { kind: string }).kind} encoder is not available in this version of Panta`,
        'use kind: hashing or onnx',
      );
  }
}
