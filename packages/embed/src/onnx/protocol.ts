/** Messages between the main thread (session-thread.ts) and the ORT worker (session-worker.ts). */
import type { ErrorPlace, TensorInfo } from './model-folder.js';

export type Device = 'cpu' | 'cuda';

export interface LoadRequest {
  type: 'load';
  dir: string;
  threads?: number;
  device: Device;
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
