import { InputError, type JudgeSpec } from '@panta/core';
import type { Judge } from './judge.js';
import { ReferenceJudge } from './reference.js';

export function createJudge(spec: JudgeSpec, file: string): Judge {
  switch (spec.kind) {
    case 'reference':
      return new ReferenceJudge();
    default:
      throw new InputError(file, 'judge.kind', `the ${spec.kind} judge is not available in this version of Panta`, 'use judge: {kind: reference}');
  }
}
