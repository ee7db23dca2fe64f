import { resolve } from 'node:path';
import { parseEncoderArg } from '@panta/core';
import { embedCorpus } from '@panta/engine';
import { reportError } from '../errors.js';
import { posthocEnd, posthocView, stopOnSignal } from './posthoc-view.js';

/** `panta embed CORPUS --encoder NAME:KIND:PATH [--replace]`. */
export async function embedCommand(dir: string, opts: { encoder: string; replace?: boolean }): Promise<number> {
  const { view, onProgress } = posthocView();
  const stop = stopOnSignal(view);
  const started = Date.now();
  try {
    const parsed = parseEncoderArg(opts.encoder);
    const encoder = parsed.kind === 'onnx' ? { ...parsed, path: resolve(parsed.path) } : parsed;
    const summary = await embedCorpus(dir, encoder, { replace: opts.replace, onProgress, signal: stop.signal });
    view.stop();
    return posthocEnd(`emb_${encoder.name} (${encoder.kind})`, summary, stop.code(), (Date.now() - started) / 1000);
  } catch (error) {
    view.stop();
    return reportError(error);
  } finally {
    stop.dispose();
  }
}
