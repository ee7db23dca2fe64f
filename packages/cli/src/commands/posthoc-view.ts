import type { PosthocProgress, PosthocSummary, SweepProgress } from '@panta/engine';
import { EXIT } from '../errors.js';
import { ProgressView } from '../progress.js';

/**
 * A post-hoc pass shown as a sweep is: answers embedded or judged are its events, shards its runs, judge
 * calls its calls; the same bar on a terminal and the same line every few seconds otherwise.
 */
export function posthocView(): { view: ProgressView; onProgress: (p: PosthocProgress) => void } {
  const view = new ProgressView();
  const onProgress = (p: PosthocProgress) => {
    const sweep: SweepProgress = {
      ...p,
      tokens: 0,
      completionTokens: 0,
      retries: 0,
      runsActive: p.runsFinished < p.runsTotal ? 1 : 0,
      runsFailed: 0,
      eventsSkipped: 0,
    };
    view.update(sweep);
  };
  return { view, onProgress };
}

/**
 * Ctrl-C or SIGTERM once: the shard being rewritten is finished and the pass stops (exit 130, 143); the
 * same command resumes it. Twice: quit at once (the journal still resumes it).
 */
export function stopOnSignal(view: ProgressView): { signal: AbortSignal; code: () => number; dispose: () => void } {
  const interrupt = new AbortController();
  let code: number = EXIT.interrupted;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupt.signal.aborted) process.exit(code);
    code = signal === 'SIGTERM' ? 143 : EXIT.interrupted;
    view.stop();
    const again = signal === 'SIGTERM' ? 'SIGTERM' : 'Ctrl-C';
    process.stderr.write(
      `\npanta: ${signal === 'SIGTERM' ? 'terminated' : 'interrupted'}: finishing the shard being rewritten (${again} again to quit at once)\n`,
    );
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: interrupt.signal,
    code: () => code,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** The closing lines of a pass, and its exit code. */
export function posthocEnd(what: string, summary: PosthocSummary, stopCode: number, seconds: number): number {
  if (summary.status === 'stopped') {
    process.stderr.write(`panta: stopped; ${summary.shardsRewritten} shards done in ${summary.out}: run the same command to resume\n`);
    return stopCode;
  }
  process.stdout.write(
    `complete: ${what} over ${summary.answers.toLocaleString('en-US')} answers, ${summary.shardsRewritten} of ${summary.shardsTotal} shards rewritten in this session${summary.calls > 0 ? `, ${summary.calls} judge calls` : ''} in ${seconds.toFixed(1)} s; corpus: ${summary.out}\n`,
  );
  return EXIT.ok;
}
