import { existsSync, readFileSync, statSync } from 'node:fs';
import { parseJudgeBlock } from '@panta/core';
import { judgeCorpus } from '@panta/engine';
import { reportError } from '../errors.js';
import { posthocEnd, posthocView, stopOnSignal } from './posthoc-view.js';

/** `panta judge CORPUS --judge SPEC_OR_FILE [--name NAME] [--replace] [--concurrency N]`. */
export async function judgeCommand(
  dir: string,
  opts: { judge: string; name?: string; replace?: boolean; concurrency?: number },
): Promise<number> {
  const { view, onProgress } = posthocView();
  const stop = stopOnSignal(view);
  const started = Date.now();
  try {
    const isFile = existsSync(opts.judge) && statSync(opts.judge).isFile();
    const source = isFile ? opts.judge : '--judge';
    const judge = parseJudgeBlock(isFile ? readFileSync(opts.judge, 'utf8') : opts.judge, source);
    const summary = await judgeCorpus(dir, judge, {
      name: opts.name,
      replace: opts.replace,
      concurrency: opts.concurrency,
      source,
      onProgress,
      signal: stop.signal,
    });
    view.stop();
    return posthocEnd(`tag_${summary.name} (${judge.kind} judge)`, summary, stop.code(), (Date.now() - started) / 1000);
  } catch (error) {
    view.stop();
    return reportError(error);
  } finally {
    stop.dispose();
  }
}
