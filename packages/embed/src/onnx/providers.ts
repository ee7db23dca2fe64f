/**
 * Where an onnx encoder runs: the execution providers of its onnxruntime session, chosen from the spec's
 * `device`, the PANTA_ENCODER_DEVICE override and what this onnxruntime-node build offers. The choice is
 * pure (`askedDevice`, `planProviders`); `cudaOffered` is the one probe of the installation.
 *
 * `cuda` prefers the GPU and falls back to CPU with one warning line when the CUDA provider is missing or
 * fails to start (a CPU-only collector opening a spec written for GPU workers); `cuda-only` (environment
 * only) refuses instead, with the one-line error naming the fix.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { InputError } from '@panta/core';

/** The environment variable that overrides every onnx encoder's `device`: cpu, cuda or cuda-only. */
export const DEVICE_ENV = 'PANTA_ENCODER_DEVICE';

/** The device a spec names for an encoder. */
export type Device = 'cpu' | 'cuda';

export type AskedDevice = 'cpu' | 'cuda' | 'cuda-only';
export type Provider = 'cpu' | 'cuda';

const ASKED: readonly AskedDevice[] = ['cpu', 'cuda', 'cuda-only'];

/** The device asked for: PANTA_ENCODER_DEVICE when set (not empty), else the spec's. */
export function askedDevice(spec: Device, env: string | undefined): AskedDevice {
  const value = env?.trim();
  if (value === undefined || value === '') return spec;
  if ((ASKED as readonly string[]).includes(value)) return value as AskedDevice;
  throw new InputError(
    'environment',
    DEVICE_ENV,
    `"${value}" is not a device`,
    `set ${DEVICE_ENV} to cpu, cuda (GPU, else CPU with a warning) or cuda-only (GPU or stop), or unset it to use the spec's device`,
  );
}

/** Whether onnxruntime-node's CUDA provider is installed here, and if not, why (for the warning). */
export type CudaOffer = { ok: true } | { ok: false; why: string };

export interface ProviderPlan {
  /** The session's executionProviders, in order of preference. */
  providers: Provider[];
  /** When the session cannot start with `providers`, retry on CPU (with a warning) instead of failing. */
  retryOnCpu: boolean;
  /** Set when CUDA was asked for but is not offered: the warning to print, the session runs on CPU. */
  warning?: string;
  /** Set when CUDA was insisted on but is not offered: the session must not start. */
  refuse?: string;
}

/** The execution providers for a device asked for, given what the onnxruntime build offers. */
export function planProviders(asked: AskedDevice, cuda: CudaOffer): ProviderPlan {
  if (asked === 'cpu') return { providers: ['cpu'], retryOnCpu: false };
  if (cuda.ok) return { providers: ['cuda', 'cpu'], retryOnCpu: asked === 'cuda' };
  if (asked === 'cuda-only') return { providers: [], retryOnCpu: false, refuse: cuda.why };
  return { providers: ['cpu'], retryOnCpu: false, warning: cuda.why };
}

/** The warning line of a CUDA session that falls back to CPU (one line, no onnxruntime trace). */
export function fallbackWarning(where: string, why: string): string {
  return `panta: warning: ${where} asks for device cuda, but ${why}: it embeds on CPU (set ${DEVICE_ENV}=cpu to say so, or cuda-only to stop instead)`;
}

/**
 * Probes onnxruntime-node: the build must list a cuda backend and, when it is not bundled, its install
 * script must have put libonnxruntime_providers_cuda.so next to the binding (ONNXRUNTIME_NODE_INSTALL=cuda12).
 * Whether a GPU and CUDA's libraries are present shows only when the session starts (see retryOnCpu).
 */
export function cudaOffered(
  backends: readonly { name: string; bundled: boolean }[],
  from: string = import.meta.url,
  platform: string = process.platform,
  arch: string = process.arch,
): CudaOffer {
  const cuda = backends.find((b) => b.name === 'cuda');
  if (!cuda) return { ok: false, why: 'this onnxruntime-node build has no CUDA provider' };
  if (cuda.bundled) return { ok: true };
  let bin: string;
  try {
    bin = join(dirname(createRequire(from).resolve('onnxruntime-node')), '..', 'bin');
  } catch {
    return { ok: false, why: 'onnxruntime-node is not found' };
  }
  const dirs = existsSync(bin) ? readdirSync(bin).filter((d) => d.startsWith('napi-v')) : [];
  if (dirs.some((d) => existsSync(join(bin, d, platform, arch, 'libonnxruntime_providers_cuda.so')))) return { ok: true };
  return {
    ok: false,
    why: 'onnxruntime-node here has no CUDA provider (libonnxruntime_providers_cuda.so is not installed: the gpu image, or npm ci with ONNXRUNTIME_NODE_INSTALL=cuda12, has it)',
  };
}
