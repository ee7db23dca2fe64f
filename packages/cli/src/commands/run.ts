import { shardLabel, sweepEvents, type Shard } from '@panta/core';
import { runSweep, type LoadedSweep, type SweepNotice, type SweepSummary } from '@panta/engine';
import { EXIT, reportError } from '../errors.js';
import { ProgressView } from '../progress.js';
import { startRoleMetrics, type MetricsFlags, type RoleMetrics } from '../metrics.js';
import { summaryTable } from '../table.js';

export async function runCommand(
  spec: string,
  opts: { out?: string; concurrency?: number; seed?: number; shard?: Shard; force?: boolean; logLevel?: string } & MetricsFlags,
): Promise<number> {
  const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
  if (opts.logLevel !== undefined && !levels.includes(opts.logLevel)) {
    process.stderr.write(`panta: run: --log-level: unknown level "${opts.logLevel}"; fix: use one of ${levels.join(', ')}\n`);
    return EXIT.badInput;
  }
  const view = new ProgressView();
  const started = Date.now();
  const stop = stopOnSignal(view);
  let metrics: RoleMetrics | undefined;
  let sweepName = '';
  let encoderName = '';
  try {
    metrics = await startRoleMetrics('run', opts);
    const summary = await runSweep(spec, {
      out: opts.out,
      concurrency: opts.concurrency,
      seed: opts.seed,
      shard: opts.shard,
      force: opts.force,
      logLevel: opts.logLevel,
      signal: stop.signal,
      onPlan: (sweep) => {
        sweepName = sweep.spec.name;
        encoderName = sweep.spec.encoders[0]?.name ?? '';
        sayPlan(sweep);
      },
      onNotice: (notice) => view.note(`panta: ${noticeText(notice)}`),
      onProgress: (p) => {
        view.update(p);
        metrics?.observe(sweepName, p);
      },
    });
    view.stop();
    if (summary.status === 'stopped') {
      process.stderr.write(`panta: stopped; written events are saved in ${summary.out}: run the same command to resume\n`);
      return stop.code();
    }
    return sayFinished(summary, (Date.now() - started) / 1000, encoderName, opts.shard);
  } catch (error) {
    view.stop();
    return reportError(error);
  } finally {
    stop.remove();
    await metrics?.close();
  }
}

/**
 * Ctrl-C (or SIGTERM, as Slurm and Kubernetes send) once: finish the calls in flight, make every written
 * event durable, release the folder, exit 130 (143 for SIGTERM); resume later with the same command.
 * Twice: quit at once (durable parts still resume).
 */
function stopOnSignal(view: ProgressView): { signal: AbortSignal; code(): number; remove(): void } {
  const interrupt = new AbortController();
  let stopCode: number = EXIT.interrupted;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupt.signal.aborted) process.exit(stopCode);
    stopCode = signal === 'SIGTERM' ? 143 : EXIT.interrupted;
    view.stop();
    const again = signal === 'SIGTERM' ? 'SIGTERM' : 'Ctrl-C';
    process.stderr.write(
      `\npanta: ${signal === 'SIGTERM' ? 'terminated' : 'interrupted'}: finishing the calls in flight and saving what is written (${again} again to quit at once)\n`,
    );
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: interrupt.signal,
    code: () => stopCode,
    remove: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** What the sweep will run, said before it starts. */
function sayPlan(sweep: LoadedSweep): void {
  if (sweep.spec.seed === undefined) process.stderr.write('panta: warning: the spec sets no seed; using seed 0\n');
  const events = sweepEvents(sweep.runs);
  const part = sweep.shard ? `${shardLabel(sweep.shard)}: ` : '';
  // Adaptive temperatures: these are the first round's; each later round adds runs (panta plan prices the most).
  const adaptive = Array.isArray(sweep.spec.temperatures) ? '' : ` in the first of ${sweep.spec.temperatures.adaptive.rounds + 1} rounds`;
  process.stderr.write(`panta: ${part}${sweep.runs.length} runs, ${events.toLocaleString('en-US')} events${adaptive} -> ${sweep.out}\n`);
  // More parts than runs: this part writes an empty partial corpus, which panta merge still expects.
  if (sweep.shard && sweep.runs.length === 0)
    process.stderr.write(`panta: note: ${shardLabel(sweep.shard)} has no runs (the array has more parts than the grid has runs)\n`);
}

/** The final table and the one-line verdict of a sweep that ran to its end; its exit code. */
function sayFinished(summary: SweepSummary, seconds: number, encoderName: string, shard: Shard | undefined): number {
  if (summary.final.length > 0)
    process.stdout.write(`\nfinal sweep, mean over trials (encoder: ${encoderName}):\n${summaryTable(summary.final)}\n\n`);
  const where = summary.out;
  process.stdout.write(
    `${summary.status}: ${summary.runsComplete}/${summary.runsPlanned} runs, ${summary.eventsWritten.toLocaleString('en-US')} events in ${seconds.toFixed(1)} s; corpus: ${where}\n`,
  );
  if (shard && summary.status === 'complete') {
    process.stdout.write(
      `${shardLabel(shard)} done: no order parameters yet; once every part is done, run: panta merge OUT PART... (all ${shard.count} part folders)\n`,
    );
  }
  if (summary.failed.length > 0) {
    process.stderr.write(
      `panta: ${summary.failed.length} runs failed (${summary.failed.slice(0, 3).join(', ')}${summary.failed.length > 3 ? ', ...' : ''}); run the same command again to resume them\n`,
    );
    return EXIT.failed;
  }
  return summary.status === 'complete' ? EXIT.ok : EXIT.failed;
}

function noticeText(notice: SweepNotice): string {
  switch (notice.kind) {
    case 'resume': {
      const { runsComplete, runsPartial, runsTotal } = notice;
      return `resuming ${runsTotal - runsComplete} of ${runsTotal} runs (${runsComplete} complete on disk, ${runsPartial} partly written)`;
    }
    case 'stale-lock': {
      const h = notice.holder;
      return `warning: took over the corpus folder's lock from pid ${h.pid} on ${h.host} ("${h.command}", since ${h.since}), which is no longer running`;
    }
    case 'repaired':
      return `run ${notice.run}: discarded ${notice.discarded.length} damaged file${notice.discarded.length === 1 ? '' : 's'} (${notice.discarded.join(', ')}); the run continues after its last good part`;
  }
}
