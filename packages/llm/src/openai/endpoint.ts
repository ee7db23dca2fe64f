import { InputError, registerSecret } from '@panta/core';

/** The key local servers get when the spec names no api_key_env (vLLM's default; ignored by llama.cpp, Ollama). */
export const DUMMY_API_KEY = 'EMPTY';

/**
 * The API key: `process.env[api_key_env]` when the spec names a variable (which must then be set and
 * non-empty), else `EMPTY`. The key is only handed to the SDK client, and registered with the process's
 * redactor: every log line, journal, corpus file, Redis record and console line this process writes has it
 * replaced with `[redacted]`, should a server echo it.
 */
export function resolveApiKey(apiKeyEnv: string | undefined, file: string, env: NodeJS.ProcessEnv = process.env): string {
  if (apiKeyEnv === undefined) return DUMMY_API_KEY;
  const key = env[apiKeyEnv];
  if (key === undefined || key.trim() === '') {
    throw new InputError(
      file,
      'backend.api_key_env',
      `the environment variable ${apiKeyEnv} is not set`,
      `export ${apiKeyEnv}=<your key>, or remove api_key_env for a local server`,
    );
  }
  registerSecret(key);
  return key.trim();
}

/** The base URL list of a spec, as given. */
export function endpointList(baseUrl: string | readonly string[]): string[] {
  return typeof baseUrl === 'string' ? [baseUrl] : [...baseUrl];
}

/**
 * OpenAI-compatible API root: the URL as given, without a trailing slash; a bare origin
 * (`http://host:8000` or `http://host:8000/`) gets `/v1`, where vLLM, llama.cpp, Ollama and OpenAI serve.
 */
export function openaiApiRoot(url: string): string {
  const u = new URL(url);
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/v1';
  return u.toString().replace(/\/+$/, '');
}

/** Anthropic base URL: the origin the SDK appends `/v1/messages` to; a trailing `/v1` given by habit is dropped. */
export function anthropicBase(url: string): string {
  const u = new URL(url);
  u.pathname = u.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return u.toString().replace(/\/+$/, '');
}
