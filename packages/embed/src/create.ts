import { InputError, type EncoderSpec } from '@panta/core';
import type { Encoder } from './encoder.js';
import { HashingEncoder } from './hashing.js';

export function createEncoder(spec: EncoderSpec, file: string, index: number): Encoder {
  switch (spec.kind) {
    case 'hashing':
      return new HashingEncoder(spec.name, spec.dim);
    default:
      throw new InputError(file, `encoders[${index}].kind`, `the ${spec.kind} encoder is not available in this version of Panta`, 'use kind: hashing');
  }
}
