import { InputError, type BackendSpec, type Prompt } from '@panta/core';
import type { LlmBackend } from './backend.js';
import { AnthropicBackend } from './anthropic/backend.js';
import { OpenAICompatibleBackend, type RealBackendOptions } from './openai/backend.js';
import { SurrogateBackend } from './surrogate/backend.js';

/**
 * Builds the backend a spec names. `options` reach the real backends only (retry hook for logs and metrics,
 * back-off constants); `file` names the spec in input errors (an API key variable that is not set).
 */
export function createBackend(
  spec: BackendSpec,
  prompts: readonly Prompt[],
  file: string,
  options: Omit<RealBackendOptions, 'file'> = {},
): LlmBackend {
  switch (spec.kind) {
    case 'surrogate':
      return new SurrogateBackend(spec, prompts);
    case 'openai':
      return new OpenAICompatibleBackend(spec, { ...options, file });
    case 'anthropic':
      return new AnthropicBackend(spec, { ...options, file });
    default:
      throw new InputError(
        file,
        'backend.kind',
        `the ${(spec as { kind: string }).kind} backend is not available in this version of Panta`,
        'use backend: {kind: surrogate}, openai or anthropic',
      );
  }
}
