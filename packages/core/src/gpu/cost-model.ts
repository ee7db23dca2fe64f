import { InputError } from '../errors.js';

/**
 * What one GPU serving one model costs per request: the figures a simulated vLLM endpoint
 * (`panta serve-surrogate --cost-model`) runs on and `panta plan --gpu` prices a sweep with. Pure data and
 * arithmetic; the simulator (packages/llm/src/server) and the plan (campaign-cost) share it, so the plan's
 * GPU-hours and the simulator's busy time are the same model by construction.
 *
 * A request costs GPU time in two parts:
 * - prefill: `prefillUsPerToken` per prompt token that is not already in the prefix cache (whole blocks of
 *   `blockTokens` only: vLLM's automatic prefix caching hashes full blocks);
 * - decode: one engine step per output token; a step with b running sequences takes
 *   max(decodeStepFloorMs, b * decodeUsPerToken / 1000) ms (the weights are read once per step, so a small
 *   batch is bound by memory bandwidth; a full one by compute), so `decodeUsPerToken` is the amortised cost of
 *   a token in a full batch.
 * The KV cache holds `kvCapacityTokens` tokens over every running sequence (prompt + generated); a request
 * whose cached prefix and first prefill chunk do not fit waits in the server's queue, and a running one that
 * cannot grow preempts another, as vLLM V1's scheduler makes it (core's VllmEngine).
 *
 * The figures are a cost model's, derived from published numbers (cited in `sources`, and in
 * bench/NOTES.md), never measured here on a GPU.
 */
export interface GpuCostModel {
  /** Name of a built-in (`h100-qwen3-14b`) or of the file it came from. */
  name: string;
  /** The GPU, in words (for output). */
  gpu: string;
  /** The served model, in words. */
  model: string;
  /** GPU time per uncached prompt token (µs). */
  prefillUsPerToken: number;
  /** GPU time per output token in a full batch (µs). */
  decodeUsPerToken: number;
  /** The shortest decode step (ms): the weights read once from HBM. */
  decodeStepFloorMs: number;
  /** KV-cache capacity in tokens, over all running sequences. */
  kvCapacityTokens: number;
  /** KV bytes per token (for output: a request's footprint). */
  kvBytesPerToken: number;
  /** Tokens per KV block, the prefix cache's unit (vLLM: 16). */
  blockTokens: number;
  /** Most sequences running at once (vLLM's max_num_seqs: 256). */
  maxNumSeqs: number;
  /** Most tokens one engine step schedules, prefill chunks included (vLLM's max_num_batched_tokens). */
  maxBatchedTokens: number;
  /** Where each figure comes from. */
  sources: readonly string[];
}

/** Qwen3-14B's KV cache: 40 layers x 8 KV heads x 128 dims x 2 (K and V) x 2 bytes (BF16) = 160 KiB a token. */
const QWEN3_14B_KV_BYTES = 40 * 8 * 128 * 2 * 2;

const QWEN3_14B_SOURCES = [
  'Qwen3-14B config.json (huggingface.co/Qwen/Qwen3-14B): 40 layers, 8 KV heads, head_dim 128 -> 160 KiB of BF16 KV cache per token; 14.8 B parameters -> 29.5 GB of BF16 weights',
  'GPUStack Performance Lab, "Optimizing Qwen3-14B Throughput on NVIDIA H100 GPUs" (docs.gpustack.ai; vLLM v0.11.0 baseline, vllm bench serve): 32,000-token prompts with 100 output tokens at 8,299 total tokens/s, 0.26 requests/s; the model prices prompt tokens at ~88 us (2 x 14.8 GFLOP a token at ~34% of 989 TFLOPS) and output tokens at ~220 us in a full batch',
  'NVIDIA H100 SXM datasheet: 80 GB HBM3 at 3.35 TB/s; H200: 141 GB HBM3e at 4.8 TB/s, the same 989 dense BF16 TFLOPS',
  'vLLM defaults: gpu_memory_utilization 0.9, block_size 16, max_num_seqs 256, max_num_batched_tokens 8192 (online serving)',
];

export const GPU_COST_MODELS = {
  'h100-qwen3-14b': {
    name: 'h100-qwen3-14b',
    gpu: 'NVIDIA H100 SXM 80 GB',
    model: 'Qwen3-14B (BF16)',
    prefillUsPerToken: 88,
    decodeUsPerToken: 220,
    decodeStepFloorMs: 8.8,
    kvCapacityTokens: 240_000,
    kvBytesPerToken: QWEN3_14B_KV_BYTES,
    blockTokens: 16,
    maxNumSeqs: 256,
    maxBatchedTokens: 8192,
    sources: QWEN3_14B_SOURCES,
  },
  'h200-qwen3-14b': {
    name: 'h200-qwen3-14b',
    gpu: 'NVIDIA H200 141 GB',
    model: 'Qwen3-14B (BF16)',
    prefillUsPerToken: 88,
    decodeUsPerToken: 160,
    decodeStepFloorMs: 6.1,
    kvCapacityTokens: 585_000,
    kvBytesPerToken: QWEN3_14B_KV_BYTES,
    blockTokens: 16,
    maxNumSeqs: 256,
    maxBatchedTokens: 8192,
    sources: QWEN3_14B_SOURCES,
  },
} as const satisfies Record<string, GpuCostModel>;

export type GpuCostModelName = keyof typeof GPU_COST_MODELS;

/** GPU time (seconds) of one request under the model: uncached prompt tokens prefilled, output tokens decoded in a full batch. */
export function requestGpuSeconds(model: GpuCostModel, uncachedPromptTokens: number, outputTokens: number): number {
  return (uncachedPromptTokens * model.prefillUsPerToken + outputTokens * model.decodeUsPerToken) / 1e6;
}

/** Time of one decode step with `running` sequences (ms). */
export function decodeStepMs(model: GpuCostModel, running: number): number {
  return Math.max(model.decodeStepFloorMs, (running * model.decodeUsPerToken) / 1000);
}

/** Prompt tokens a prefix cache can serve of a prompt whose first `sharedTokens` match a cached prompt: whole blocks only. */
export function cachedPrefixTokens(model: GpuCostModel, sharedTokens: number, promptTokens: number): number {
  const shared = Math.min(sharedTokens, promptTokens - 1); // vLLM always computes the last token
  return shared <= 0 ? 0 : Math.floor(shared / model.blockTokens) * model.blockTokens;
}

const POSITIVE_FIELDS = [
  'prefillUsPerToken',
  'decodeUsPerToken',
  'decodeStepFloorMs',
  'kvCapacityTokens',
  'kvBytesPerToken',
  'blockTokens',
  'maxNumSeqs',
  'maxBatchedTokens',
] as const;

/**
 * A cost model from `--gpu NAME_OR_FILE` / `--cost-model NAME_OR_FILE`: a built-in name, or the text of a JSON
 * file (`file` names it in errors) holding a built-in to start from (`base`, default `h100-qwen3-14b`) and any
 * fields to override. Unknown keys and non-positive numbers are InputErrors.
 */
export function parseGpuCostModel(nameOrText: string, file: string): GpuCostModel {
  const trimmed = nameOrText.trim();
  if (!trimmed.startsWith('{')) {
    const m = (GPU_COST_MODELS as Record<string, GpuCostModel>)[trimmed];
    if (!m)
      throw new InputError(
        file,
        '',
        `unknown GPU cost model '${trimmed}'`,
        `use one of ${Object.keys(GPU_COST_MODELS).join(', ')} or a JSON file`,
      );
    return m;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(trimmed);
  } catch (e) {
    throw new InputError(
      file,
      '',
      `not JSON (${(e as Error).message})`,
      'write a JSON object such as {"base": "h100-qwen3-14b", "kvCapacityTokens": 200000}',
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new InputError(file, '', 'not a JSON object', 'write a JSON object of cost-model fields');
  const o = raw as Record<string, unknown>;
  const baseName = o.base ?? 'h100-qwen3-14b';
  const base = typeof baseName === 'string' ? (GPU_COST_MODELS as Record<string, GpuCostModel>)[baseName] : undefined;
  if (!base)
    throw new InputError(file, 'base', `unknown built-in '${String(baseName)}'`, `use one of ${Object.keys(GPU_COST_MODELS).join(', ')}`);
  const known = new Set<string>(['base', 'name', 'gpu', 'model', 'sources', ...POSITIVE_FIELDS]);
  for (const k of Object.keys(o))
    if (!known.has(k)) throw new InputError(file, k, 'unknown field', `remove it; fields are ${[...known].join(', ')}`);
  const out: GpuCostModel = { ...base, name: typeof o.name === 'string' ? o.name : file, sources: [...base.sources] };
  for (const k of POSITIVE_FIELDS) {
    if (o[k] === undefined) continue;
    const v = o[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
      throw new InputError(file, k, `must be a positive number (got ${JSON.stringify(v)})`, `set ${k} to a number > 0`);
    if ((k === 'blockTokens' || k === 'maxNumSeqs' || k === 'kvCapacityTokens' || k === 'maxBatchedTokens') && !Number.isInteger(v))
      throw new InputError(file, k, `must be an integer (got ${v})`, `set ${k} to a whole number`);
    out[k] = v;
  }
  for (const k of ['gpu', 'model'] as const) if (typeof o[k] === 'string') out[k] = o[k];
  if (Array.isArray(o.sources)) out.sources = o.sources.map(String);
  if (out.kvCapacityTokens < out.blockTokens)
    throw new InputError(file, 'kvCapacityTokens', 'smaller than one block', 'raise kvCapacityTokens');
  return out;
}
