import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InputError } from '@panta/core';
import { askedDevice, cudaOffered, planProviders } from '../src/onnx/providers.js';

describe('encoder execution providers', () => {
  it('the environment overrides the spec; empty means unset; anything else is refused', () => {
    expect(askedDevice('cuda', undefined)).toBe('cuda');
    expect(askedDevice('cpu', '')).toBe('cpu');
    expect(askedDevice('cpu', 'cuda')).toBe('cuda');
    expect(askedDevice('cuda', 'cpu')).toBe('cpu');
    expect(askedDevice('cpu', ' cuda-only ')).toBe('cuda-only');
    expect(() => askedDevice('cpu', 'CUDA')).toThrow(InputError);
  });

  it('cuda prefers the GPU and may fall back; cuda-only never falls back; without the provider cuda warns and cuda-only refuses', () => {
    const yes = { ok: true } as const;
    const no = { ok: false, why: 'no provider' } as const;
    expect(planProviders('cpu', yes)).toEqual({ providers: ['cpu'], retryOnCpu: false });
    expect(planProviders('cuda', yes)).toEqual({ providers: ['cuda', 'cpu'], retryOnCpu: true });
    expect(planProviders('cuda-only', yes)).toEqual({ providers: ['cuda', 'cpu'], retryOnCpu: false });
    expect(planProviders('cuda', no)).toEqual({ providers: ['cpu'], retryOnCpu: false, warning: 'no provider' });
    expect(planProviders('cuda-only', no)).toEqual({ providers: [], retryOnCpu: false, refuse: 'no provider' });
    expect(planProviders('cpu', no)).toEqual({ providers: ['cpu'], retryOnCpu: false });
  });

  it('the CUDA provider is offered when bundled or installed next to the binding', () => {
    // A fake package tree: node_modules/onnxruntime-node/{package.json,dist/index.js,bin/napi-v6/linux/x64}.
    const root = mkdtempSync(join(tmpdir(), 'panta-ort-'));
    const pkg = join(root, 'node_modules', 'onnxruntime-node');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    mkdirSync(join(pkg, 'bin', 'napi-v6', 'linux', 'x64'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'onnxruntime-node', main: 'dist/index.js' }));
    writeFileSync(join(pkg, 'dist', 'index.js'), '');
    const from = pathToFileURL(join(root, 'here.js')).href;
    const listed = [
      { name: 'cpu', bundled: true },
      { name: 'cuda', bundled: false },
    ];
    expect(cudaOffered([{ name: 'cpu', bundled: true }], from, 'linux', 'x64')).toEqual({
      ok: false,
      why: 'this onnxruntime-node build has no CUDA provider',
    });
    expect(cudaOffered(listed, from, 'linux', 'x64')).toMatchObject({
      ok: false,
      why: expect.stringContaining('libonnxruntime_providers_cuda.so'),
    });
    expect(cudaOffered([{ name: 'cuda', bundled: true }], from, 'linux', 'x64')).toEqual({ ok: true });
    writeFileSync(join(pkg, 'bin', 'napi-v6', 'linux', 'x64', 'libonnxruntime_providers_cuda.so'), '');
    expect(cudaOffered(listed, from, 'linux', 'x64')).toEqual({ ok: true });
    expect(cudaOffered(listed, from, 'linux', 'arm64').ok).toBe(false);
  });
});
