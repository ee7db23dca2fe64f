/**
 * The worker_thread that owns one onnxruntime session (run() blocks its thread, so it must not be the
 * main event loop). It tokenises, runs, mean-pools last_hidden_state over the attention mask and
 * L2-normalises; results go back as transferred Float32Array buffers.
 */
import { parentPort } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { InputError, toError } from '@panta/core';
import { checkSignature, inspectModelFolder, type TensorInfo } from './model-folder.js';
import { OnnxTokenizer, padBatch, type TokenBatch } from './tokenize.js';
import type { EmbedRequest, LoadRequest, Reply, Request, SerializedError } from './protocol.js';
import { cudaOffered, fallbackWarning, planProviders, type Provider } from './providers.js';

interface State {
  session: ort.InferenceSession;
  tokenizer: OnnxTokenizer;
  dim: number;
  takesTokenTypes: boolean;
}

let state: State | undefined;
let chain: Promise<void> = Promise.resolve();

function serialize(error: unknown): SerializedError {
  if (error instanceof InputError)
    return { name: error.name, message: error.message, file: error.file, field: error.field, problem: error.problem, fix: error.fix };
  const e = toError(error);
  return { name: e.name, message: e.message };
}

function post(reply: Reply, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(reply, transfer);
}

function meta(list: readonly ort.InferenceSession.ValueMetadata[]): TensorInfo[] {
  return list.map((m) =>
    m.isTensor ? { name: m.name, isTensor: true, type: m.type, shape: [...m.shape] } : { name: m.name, isTensor: false },
  );
}

/** Mean over the attention mask, then L2 normalisation; hidden is [batch, seqLen, dim]. */
export function meanPoolNormalize(hidden: Float32Array, mask: BigInt64Array, batch: number, seqLen: number, dim: number): Float32Array {
  const out = new Float32Array(batch * dim);
  const acc = new Float64Array(dim);
  for (let b = 0; b < batch; b++) {
    acc.fill(0);
    let count = 0;
    for (let t = 0; t < seqLen; t++) {
      if (mask[b * seqLen + t] === 0n) continue;
      count++;
      const base = (b * seqLen + t) * dim;
      for (let k = 0; k < dim; k++) acc[k] += hidden[base + k];
    }
    let norm = 0;
    for (let k = 0; k < dim; k++) {
      acc[k] = acc[k] / Math.max(count, 1);
      norm += acc[k] * acc[k];
    }
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let k = 0; k < dim; k++) out[b * dim + k] = acc[k] * inv;
  }
  return out;
}

async function run(s: Omit<State, 'dim'>, batch: TokenBatch): Promise<{ data: Float32Array; dim: number }> {
  const shape = [batch.batch, batch.seqLen];
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor('int64', batch.inputIds, shape),
    attention_mask: new ort.Tensor('int64', batch.attentionMask, shape),
  };
  if (s.takesTokenTypes) feeds.token_type_ids = new ort.Tensor('int64', batch.tokenTypeIds, shape);
  const out = await s.session.run(feeds, ['last_hidden_state']);
  const hidden = out.last_hidden_state!;
  const dims = hidden.dims;
  if (dims.length !== 3 || hidden.type !== 'float32')
    throw new Error(`last_hidden_state came back as ${hidden.type} [${dims.join(', ')}], expected float32 [batch, sequence, dim]`);
  const dim = dims[2];
  const data = meanPoolNormalize(hidden.data as Float32Array, batch.attentionMask, batch.batch, batch.seqLen, dim);
  for (const t of Object.values(out)) t.dispose?.();
  return { data, dim };
}

async function load(req: LoadRequest, fellBack?: string): Promise<void> {
  const place = req.place;
  const folder = inspectModelFolder(req.dir, place);
  const options: ort.InferenceSession.SessionOptions = { logSeverityLevel: 3 };
  if (req.threads !== undefined) options.intraOpNumThreads = req.threads;
  const where = req.where ?? folder.model;
  const plan = planProviders(req.device, req.assumeCudaOffered ? { ok: true } : cudaOffered(ort.listSupportedBackends()));
  const deviceField = place ? place.field.replace(/\.path$/, '.device') : 'device';
  const cudaFix =
    'install the GPU build of onnxruntime-node (the gpu image, or npm ci with ONNXRUNTIME_NODE_INSTALL=cuda12; CUDA 12 and cuDNN 9 must be present), or set PANTA_ENCODER_DEVICE=cuda to fall back to CPU';
  if (plan.refuse !== undefined)
    throw new InputError(place?.file ?? folder.model, deviceField, `cuda-only was asked for but ${plan.refuse}`, cudaFix);
  const warning = fellBack ?? (plan.warning === undefined ? undefined : fallbackWarning(where, plan.warning));
  const provider: Provider = plan.providers[0]!;
  // A CUDA provider that fails to load logs a multi-line trace of its own; the error it throws says the
  // same in one line, which the warning or the InputError carries.
  if (provider === 'cuda') ort.env.logLevel = 'fatal';
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(folder.model, { ...options, executionProviders: plan.providers });
  } catch (error) {
    const msg = (error as Error).message.split('\n')[0];
    const cudaFailed = provider === 'cuda' && /cuda|provider|shared library/i.test(msg);
    if (cudaFailed && !plan.retryOnCpu)
      throw new InputError(
        place?.file ?? folder.model,
        deviceField,
        `cuda was asked for but onnxruntime's CUDA provider does not start here (${msg})`,
        cudaFix,
      );
    if (!cudaFailed)
      throw new InputError(
        place?.file ?? folder.model,
        place?.field ?? '',
        `${folder.model} is not a loadable ONNX model (${msg})`,
        're-export the model: optimum-cli export onnx --model sentence-transformers/all-MiniLM-L6-v2 DIR',
      );
    return load({ ...req, device: 'cpu' }, fallbackWarning(where, `onnxruntime's CUDA provider does not start here (${msg})`));
  }
  const inputs = meta(session.inputMetadata);
  const outputs = meta(session.outputMetadata);
  const sig = checkSignature(folder.model, inputs, outputs, place);
  const tokenizer = OnnxTokenizer.load(folder, place, req.maxLength);
  const partial = { session, tokenizer, takesTokenTypes: sig.inputs.includes('token_type_ids') };
  let dim = sig.dim;
  if (dim === 0) dim = (await run(partial, tokenizer.encodeBatch(['probe']))).dim;
  state = { ...partial, dim };
  post({
    type: 'loaded',
    dim,
    maxLength: tokenizer.maxLength,
    padId: tokenizer.padId,
    provider,
    ...(warning !== undefined ? { warning } : {}),
    inputs,
    outputs,
  });
}

async function embed(req: EmbedRequest): Promise<void> {
  if (!state) throw new Error('the onnx session is not loaded');
  const batch = req.tokens ? padBatch(req.tokens, state.tokenizer.padId) : state.tokenizer.encodeBatch(req.texts ?? []);
  if (batch.batch === 0) {
    post({ type: 'result', id: req.id, dim: state.dim, data: new Float32Array(0) });
    return;
  }
  const { data, dim } = await run(state, batch);
  post({ type: 'result', id: req.id, dim, data }, [data.buffer as ArrayBuffer]);
}

parentPort!.on('message', (msg: Request) => {
  chain = chain.then(async () => {
    try {
      if (msg.type === 'load') await load(msg);
      else if (msg.type === 'embed') await embed(msg);
      else if (msg.type === 'close') {
        await state?.session.release();
        state = undefined;
        parentPort!.close();
      }
    } catch (error) {
      post({ type: 'error', ...(msg.type === 'embed' ? { id: msg.id } : {}), error: serialize(error) });
    }
  });
});
