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
 * whose prompt and `max_tokens` do not fit waits in the server's queue, as vLLM's scheduler makes it.
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
  'vLLM serving figures for Qwen3-14B on one H100 as cited in issue 36: ~88 us of GPU time per prompt token, ~220 us per output token, 0.26 requests/s at 32k prompt / 100 output tokens',
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
