import { registerSdkErrors } from './retry/classify.js';

/**
 * The vendor SDKs, loaded on first use. Importing `openai` and `@anthropic-ai/sdk` is a large part of a
 * command's start (bench/NOTES.md), which a sweep on the surrogate, and every `panta` command that makes no
 * call, should not pay. Loading one registers its error classes with classifyFailure (an SDK's errors only
 * exist once it is loaded).
 */
let openai: Promise<typeof import('openai')> | undefined;
let anthropic: Promise<typeof import('@anthropic-ai/sdk')> | undefined;

export function loadOpenAI(): Promise<typeof import('openai')> {
  return (openai ??= import('openai').then((m) => {
    registerSdkErrors(m);
    return m;
  }));
}

export function loadAnthropic(): Promise<typeof import('@anthropic-ai/sdk')> {
  return (anthropic ??= import('@anthropic-ai/sdk').then((m) => {
    registerSdkErrors(m);
    return m;
  }));
}
