import { Worker } from 'node:worker_threads';
import { InputError } from '@panta/core';
import type { EmbedRequest, LoadRequest, Loaded, Reply, SerializedError } from './protocol.js';

/**
 * The worker script. Run as TypeScript source (the test runner), this module starts the built JavaScript
 * in dist/ instead, since a worker cannot load .ts (the test command builds first).
 */
export function workerUrl(from: string = import.meta.url): URL {
  return from.endsWith('.ts') ? new URL('../../dist/onnx/session-worker.js', from) : new URL('./session-worker.js', from);
}

function revive(e: SerializedError): Error {
  if (e.name === 'InputError' && e.file !== undefined && e.problem !== undefined && e.fix !== undefined)
    return new InputError(e.file, e.field ?? '', e.problem, e.fix);
  const error = new Error(e.message);
  error.name = e.name;
  return error;
}

interface Pending {
  resolve: (rows: Float32Array[]) => void;
  reject: (error: Error) => void;
}

/** The main-thread handle of one ORT session living in a worker_thread. */
export class SessionThread {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly info: Loaded,
  ) {
    worker.on('message', (reply: Reply) => this.onReply(reply));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', () => this.fail(new Error('the onnx session worker exited')));
  }

  get dim(): number {
    return this.info.dim;
  }

  /** Starts the worker and loads the model; rejects with an InputError for a bad folder or device. */
  static start(load: Omit<LoadRequest, 'type'>): Promise<SessionThread> {
    const worker = new Worker(workerUrl());
    return new Promise<SessionThread>((resolve, reject) => {
      const cleanup = (): void => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (reply: Reply): void => {
        cleanup();
        if (reply.type === 'loaded') resolve(new SessionThread(worker, reply));
        else {
          void worker.terminate();
          reject(reply.type === 'error' ? revive(reply.error) : new Error(`unexpected reply ${reply.type} from the onnx worker`));
        }
      };
      const onError = (error: Error): void => {
        cleanup();
        reject(error);
      };
      const onExit = (code: number): void => {
        cleanup();
        reject(new Error(`the onnx session worker exited with code ${code} while loading`));
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ type: 'load', ...load } satisfies LoadRequest);
    });
  }

  /** Embeds texts (or pre-tokenised id rows) in one session run; one unit row per input. */
  embed(input: { texts: string[] } | { tokens: number[][] }): Promise<Float32Array[]> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'embed', id, ...input } satisfies EmbedRequest);
    });
  }

  async close(): Promise<void> {
    if (this.dead) return;
    this.dead = new Error('the onnx encoder is closed');
    await this.worker.terminate();
  }

  private onReply(reply: Reply): void {
    if (reply.type === 'loaded' || reply.id === undefined) return;
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (reply.type === 'error') {
      p.reject(revive(reply.error));
      return;
    }
    const rows: Float32Array[] = [];
    for (let i = 0; i < reply.data.length / reply.dim; i++) rows.push(reply.data.subarray(i * reply.dim, (i + 1) * reply.dim));
    p.resolve(rows);
  }

  private fail(error: Error): void {
    this.dead ??= error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}
