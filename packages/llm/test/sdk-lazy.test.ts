import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/** Runs `code` in a fresh Node process with a resolve hook that prints every bare package it loads. */
function packagesLoaded(code: string): string[] {
  const hook = `export async function resolve(specifier, context, next) { if (/^[@a-z]/.test(specifier) && !specifier.startsWith('node:')) process.stderr.write('LOAD ' + specifier + '\\n'); return next(specifier, context); }`;
  const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));`;
  const r = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', code],
    { cwd: root, encoding: 'utf8' },
  );
  expect(r.status, r.stderr).toBe(0);
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith('LOAD '))
    .map((l) => l.slice(5));
}

describe('vendor SDKs', () => {
  it('are not loaded by the engine nor by a surrogate backend, and are once a real backend exists', () => {
    // One process: the packages loaded up to the mark (the engine, a surrogate backend, and whatever it would load a
    // moment later), then those a real backend loads.
    const loaded = packagesLoaded(
      "const { createBackend } = await import('@panta/llm'); await import('@panta/engine'); createBackend({ kind: 'surrogate', model: 's', latency_ms: 0, coupling: 1, field: { correct: 0, false: 0, not_known: 0 }, premise_bias: 0, belief: 0 }, [], 'spec.yaml'); " +
        "await new Promise((r) => setTimeout(r, 200)); process.stderr.write('LOAD --mark--\\n'); " +
        "const { backendSchema } = await import('@panta/core'); const b = createBackend(backendSchema.parse({ kind: 'openai', base_url: 'http://127.0.0.1:9', model: 'm', server: 'vllm' }), [], 'spec.yaml'); await new Promise((r) => setTimeout(r, 500)); await b.close();",
    );
    const mark = loaded.indexOf('--mark--');
    expect(mark).toBeGreaterThan(0);
    const surrogate = loaded.slice(0, mark);
    expect(surrogate).toContain('@panta/engine');
    expect(surrogate).not.toContain('openai');
    expect(surrogate).not.toContain('@anthropic-ai/sdk');
    expect(loaded.slice(mark)).toContain('openai');
  });
});
