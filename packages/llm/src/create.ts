import { InputError, type BackendSpec, type Prompt } from '@panta/core';
import type { LlmBackend } from './backend.js';
import { SurrogateBackend } from './surrogate/backend.js';

/** Builds the backend a spec names. */
export function createBackend(spec: BackendSpec, prompts: readonly Prompt[], file: string): LlmBackend {
  switch (spec.kind) {
    case 'surrogate':
      return new SurrogateBackend(spec, prompts);
    default:
      throw new InputError(file, 'backend.kind', `the ${spec.kind} backend is not available in this version of Panta`, 'use backend: {kind: surrogate}');
  }
}
