import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import type { EncoderSpec } from '@panta/core';
import { checkEmbeddings } from '../check-vector.js';
import type { Encoder } from '../encoder.js';
import { MicroBatcher } from './batcher.js';
import { inspectModelFolder, type ErrorPlace } from './model-folder.js';
import type { Device, Loaded } from './protocol.js';
import { askedDevice, DEVICE_ENV, type Provider } from './providers.js';
import { SessionThread } from './session-thread.js';

export type OnnxEncoderSpec = Extract<EncoderSpec, { kind: 'onnx' }>;

/** Default wait of the micro-batcher for more concurrent texts before a batch goes out. */
export const DEFAULT_MAX_WAIT_MS = 2;

export interface OnnxOptions {
  name: string;
  /** Model folder. */
  path: string;
  maxBatch?: number;
  maxWaitMs?: number;
  threads?: number;
  device?: Device;
  /** Overrides `device` (cpu, cuda or cuda-only); default process.env.PANTA_ENCODER_DEVICE. */
  deviceOverride?: string;
  /** Tries the CUDA provider without probing the installation first (tests of the fallback). */
  assumeCudaOffered?: boolean;
  /** Where the one warning line of a CUDA encoder running on CPU goes; default stderr, once per process. */
  warn?: (line: string) => void;
  /** Caps the sequence length below the model's own. */
  maxLength?: number;
  place?: ErrorPlace;
}

/** sha256 of a file, streamed (a 400 MB model must not block the event loop). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const warned = new Set<string>();

/** Writes a line to stderr once per process (a collector opening four encoders warns once per cause). */
function warnOnce(line: string): void {
  const key = line.replace(/^panta: warning: \S+ \([^)]*\) /, '');
  if (warned.has(key)) return;
  warned.add(key);
  process.stderr.write(`${line}\n`);
}

/**
 * A sentence-transformers ONNX export run in a worker_thread, with a micro-batcher across concurrent
 * `encode` calls. `model` is the folder name and the sha256 prefix of the .onnx file.
 */
export class OnnxEncoder implements Encoder {
  private readonly batcher: MicroBatcher<string, Float32Array>;

  private constructor(
    readonly name: string,
    readonly dim: number,
    readonly model: string,
    readonly maxLength: number,
    private readonly thread: SessionThread,
    maxBatch: number,
    maxWaitMs: number,
  ) {
    this.batcher = new MicroBatcher((texts) => thread.embed({ texts }), maxBatch, maxWaitMs);
  }

  /** Opens the encoder of a spec entry; a relative path is relative to the spec file. */
  static open(spec: OnnxEncoderSpec, file: string, index: number, warn?: (line: string) => void): Promise<OnnxEncoder> {
    const extra = spec as OnnxEncoderSpec & { max_wait_ms?: number; max_length?: number };
    const path = isAbsolute(spec.path) ? spec.path : resolve(dirname(file), spec.path);
    return OnnxEncoder.fromOptions({
      name: spec.name,
      path,
      maxBatch: spec.max_batch,
      ...(extra.max_wait_ms !== undefined ? { maxWaitMs: extra.max_wait_ms } : {}),
      ...(spec.threads !== undefined ? { threads: spec.threads } : {}),
      device: spec.device,
      ...(extra.max_length !== undefined ? { maxLength: extra.max_length } : {}),
      place: { file, field: `encoders[${index}].path` },
      ...(warn ? { warn } : {}),
    });
  }

  static async fromOptions(o: OnnxOptions): Promise<OnnxEncoder> {
    const folder = inspectModelFolder(o.path, o.place);
    const device = askedDevice(o.device ?? 'cpu', o.deviceOverride ?? process.env[DEVICE_ENV]);
    const index = o.place ? /^encoders\[\d+\]/.exec(o.place.field)?.[0] : undefined;
    const thread = await SessionThread.start({
      dir: folder.dir,
      device,
      where: index ? `${index} (${o.name})` : `encoder ${o.name}`,
      ...(o.assumeCudaOffered ? { assumeCudaOffered: true } : {}),
      ...(o.threads !== undefined ? { threads: o.threads } : {}),
      ...(o.maxLength !== undefined ? { maxLength: o.maxLength } : {}),
      ...(o.place ? { place: o.place } : {}),
    });
    let digest: string;
    try {
      digest = await sha256File(folder.model);
    } catch (error) {
      await thread.close();
      throw error;
    }
    if (thread.info.warning !== undefined) (o.warn ?? warnOnce)(thread.info.warning);
    else if (thread.info.provider === 'cuda') (o.warn ?? warnOnce)(`panta: ${index ?? 'encoder'} (${o.name}) embeds on cuda`);
    const model = `${basename(folder.dir)}@sha256:${digest.slice(0, 12)}`;
    return new OnnxEncoder(o.name, thread.dim, model, thread.info.maxLength, thread, o.maxBatch ?? 32, o.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
  }

  /** What the worker found: inputs and outputs of the model, dim, max length, pad id. */
  get info(): Loaded {
    return this.thread.info;
  }

  /** The execution provider the session runs on: cuda, or cpu (asked for, or fallen back to). */
  get provider(): Provider {
    return this.thread.info.provider;
  }

  /** Batches sent to the worker so far. */
  get batches(): number {
    return this.batcher.batches;
  }

  encode(texts: readonly string[]): Promise<Float32Array[]> {
    return this.batcher.submit(texts).then((vectors) => checkEmbeddings(this.name, texts, vectors));
  }

  /** One session run over pre-tokenised rows (special tokens included), bypassing the batcher. */
  encodeTokens(rows: number[][]): Promise<Float32Array[]> {
    return this.thread.embed({ tokens: rows });
  }

  async close(): Promise<void> {
    this.batcher.cancel(new Error(`encoder ${this.name} is closed`));
    await this.thread.close();
  }
}
