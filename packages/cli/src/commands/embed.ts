import { resolve } from 'node:path';
import { InputError, parseEncoderArg } from '@panta/core';
import { embedCorpus } from '@panta/engine';
import { EXIT, reportError } from '../errors.js';
import { posthocEnd, posthocView, stopOnSignal } from './posthoc-view.js';

/**
 * `panta embed CORPUS --encoder NAME:KIND:PATH [--encoder ...] [--replace]`: every encoder given is added, one
 * pass each in the order given (each pass atomic and resumable on its own); all are parsed, and their names
 * checked distinct, before the first pass starts.
 */
export async function embedCommand(dir: string, opts: { encoder: string | string[]; replace?: boolean }): Promise<number> {
  try {
    const given = Array.isArray(opts.encoder) ? opts.encoder : [opts.encoder];
    const encoders = given.map((arg) => {
      const parsed = parseEncoderArg(arg);
      return parsed.kind === 'onnx' ? { ...parsed, path: resolve(parsed.path) } : parsed;
    });
    encoders.forEach((e, i) => {
      const first = encoders.findIndex((o) => o.name === e.name);
      if (first < i)
        throw new InputError(
          '--encoder',
          '',
          `the name "${e.name}" is given twice (${given[first]} and ${given[i]})`,
          'give each encoder its own name',
        );
    });
    let code: number = EXIT.ok;
    for (const encoder of encoders) {
      code = await embedOne(dir, encoder, opts.replace);
      if (code !== EXIT.ok) return code;
    }
    return code;
  } catch (error) {
    return reportError(error);
  }
}

async function embedOne(dir: string, encoder: ReturnType<typeof parseEncoderArg>, replace: boolean | undefined): Promise<number> {
  const started = Date.now();
  const { view, onProgress } = posthocView();
  const stop = stopOnSignal(view);
  try {
    const summary = await embedCorpus(dir, encoder, { replace, onProgress, signal: stop.signal });
    view.stop();
    return posthocEnd(`emb_${encoder.name} (${encoder.kind})`, summary, stop.code(), (Date.now() - started) / 1000);
  } catch (error) {
    view.stop();
    return reportError(error);
  } finally {
    stop.dispose();
  }
}
