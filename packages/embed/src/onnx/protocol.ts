/** Messages between the main thread (session-thread.ts) and the ORT worker (session-worker.ts). */
import type { ErrorPlace, TensorInfo } from './model-folder.js';
import type { AskedDevice, Provider } from './providers.js';

export type { Device } from './providers.js';

export interface LoadRequest {
  type: 'load';
  dir: string;
  threads?: number;
  /** The spec's device after PANTA_ENCODER_DEVICE (providers.ts: askedDevice). */
  device: AskedDevice;
  /** The encoder as the fallback warning names it, e.g. `encoders[2] (minilm_l6)`. */
  where?: string;
  /** Skips the probe of the installation and tries the CUDA provider (tests of the fallback on a CPU host). */
  assumeCudaOffered?: boolean;
  maxLength?: number;
  place?: ErrorPlace;
}

export interface EmbedRequest {
  type: 'embed';
  id: number;
  /** Either texts (tokenised in the worker) or pre-tokenised id rows (special tokens included). */
  texts?: string[];
  tokens?: number[][];
}

export type Request = LoadRequest | EmbedRequest | { type: 'close' };

export interface Loaded {
  type: 'loaded';
  dim: number;
  maxLength: number;
  padId: number;
  /** The execution provider the session runs on. */
  provider: Provider;
  /** Set when CUDA was asked for and the session fell back to CPU: the one warning line. */
  warning?: string;
  inputs: TensorInfo[];
  outputs: TensorInfo[];
}

export interface EmbedResult {
  type: 'result';
  id: number;
  dim: number;
  /** Row-major [batch, dim], unit rows. */
  data: Float32Array;
}

export interface SerializedError {
  name: string;
  message: string;
  file?: string;
  field?: string;
  problem?: string;
  fix?: string;
}

export interface ErrorReply {
  type: 'error';
  /** The embed id, absent for load errors. */
  id?: number;
  error: SerializedError;
}

export type Reply = Loaded | EmbedResult | ErrorReply;
