import { redisUrl, runCollector, runScheduler, runWorker } from '@panta/cluster';
import { roleLogger } from '@panta/engine';
import { EXIT, reportError } from '../errors.js';
import { startRoleMetrics, type MetricsFlags } from '../metrics.js';
import { watchParent } from '../parent-watch.js';

export interface RoleOptions extends MetricsFlags {
  redis?: string;
  logLevel?: string;
}

/**
 * SIGTERM, SIGINT and SIGHUP (its terminal closed) stop a role gracefully, and so does the end of the npm
 * process it was started through (watchParent); a second signal quits at once (nothing acknowledged is lost
 * either way).
 */
function stopSignal(role: string): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(sig === 'SIGINT' ? 130 : 143);
    process.stderr.write(`panta ${role}: ${sig}: stopping gracefully (again to quit at once)\n`);
    controller.abort();
  };
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  for (const s of signals) process.on(s, onSignal);
  const unwatch = watchParent((parent) => {
    if (controller.signal.aborted) return;
    process.stderr.write(`panta ${role}: its parent process (pid ${parent}, started through npm) is gone: stopping gracefully\n`);
    controller.abort();
  });
  return {
    signal: controller.signal,
    dispose: () => {
      unwatch();
      for (const s of signals) process.off(s, onSignal);
    },
  };
}

export async function schedulerCommand(
  spec: string,
  opts: RoleOptions & { out?: string; concurrency?: number; seed?: number; watchMs?: number; collectors?: number },
): Promise<number> {
  const stop = stopSignal('scheduler');
  let metrics: Awaited<ReturnType<typeof startRoleMetrics>> | undefined;
  try {
    metrics = await startRoleMetrics('scheduler', opts);
    const observe = metrics.observe;
    const summary = await runScheduler(spec, {
      onProgress: (p) => observe(p.sweepId, p),
      redis: redisUrl(opts.redis),
      out: opts.out,
      concurrency: opts.concurrency,
      seed: opts.seed,
      watchMs: opts.watchMs,
      collectors: opts.collectors,
      log: roleLogger('scheduler', opts.logLevel ?? 'info'),
      signal: stop.signal,
    });
    if (summary.status === 'stopped') return EXIT.interrupted;
    if (summary.status === 'finished') {
      process.stdout.write(
        `finished before: sweep ${summary.sweepId}, corpus complete in ${summary.out}; nothing to schedule (move or delete that folder to run the sweep again)\n`,
      );
      return EXIT.ok;
    }
    process.stdout.write(
      `${summary.status}: sweep ${summary.sweepId}, ${summary.eventsTotal.toLocaleString('en-US')} events scheduled and written\n`,
    );
    return summary.status === 'failed' || summary.failedRuns.length > 0 ? EXIT.failed : EXIT.ok;
  } catch (error) {
    return reportError(error);
  } finally {
    stop.dispose();
    await metrics?.close();
  }
}

export async function workerCommand(
  opts: RoleOptions & { concurrency?: number; baseUrl?: string[]; lockMs?: number; waitEndpoint?: number },
): Promise<number> {
  const stop = stopSignal('worker');
  let metrics: Awaited<ReturnType<typeof startRoleMetrics>> | undefined;
  try {
    metrics = await startRoleMetrics('worker', opts);
    const observe = metrics.observe;
    const summary = await runWorker({
      onProgress: (sweepId, p) =>
        observe(sweepId, { eventsWritten: p.events, inflight: p.inflight, calls: p.calls, tokens: p.tokens, retries: p.retries }),
      redis: redisUrl(opts.redis),
      concurrency: opts.concurrency ?? 16,
      baseUrl: opts.baseUrl ?? envUrls(process.env.PANTA_BASE_URL),
      lockMs: opts.lockMs,
      waitEndpointMs: (opts.waitEndpoint ?? 600) * 1000,
      log: roleLogger('worker', opts.logLevel ?? 'info'),
      signal: stop.signal,
    });
    process.stderr.write(
      `panta worker: ${summary.events} events committed, ${summary.duplicates} duplicates skipped, ${summary.failures} failed, ${summary.dropped} dropped unrun (their scheduler was gone), ${summary.continued ?? 0} run as continuations, ${summary.passedOn ?? 0} chains passed on\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  } finally {
    stop.dispose();
    await metrics?.close();
  }
}

export async function collectorCommand(
  opts: RoleOptions & {
    out?: string;
    sweep?: string;
    durableMs?: number;
    baseUrl?: string;
    waitEndpoint?: number;
    shard?: { index: number; count: number } | 'auto';
  },
): Promise<number> {
  const stop = stopSignal('collector');
  try {
    const summary = await runCollector({
      redis: redisUrl(opts.redis),
      out: opts.out,
      sweep: opts.sweep,
      ...(opts.shard ? { shard: opts.shard } : {}),
      baseUrl: opts.baseUrl,
      durableMs: opts.durableMs,
      waitEndpointMs: (opts.waitEndpoint ?? 600) * 1000,
      log: roleLogger('collector', opts.logLevel ?? 'info'),
      signal: stop.signal,
      onSweep: (sweep) => process.stderr.write(`panta collector: sweep ${sweep.spec.name} -> ${sweep.out}\n`),
    });
    // A shard other than the first ends once its runs are durable (the first finishes the corpus): null, exit 0.
    if (!summary) return opts.shard && !stop.signal.aborted ? EXIT.ok : EXIT.interrupted;
    process.stdout.write(
      `${summary.status}: ${summary.runsComplete}/${summary.runsPlanned} runs, ${summary.eventsWritten.toLocaleString('en-US')} events; corpus: ${summary.out}\n`,
    );
    return summary.status === 'complete' ? EXIT.ok : EXIT.failed;
  } catch (error) {
    return reportError(error);
  } finally {
    stop.dispose();
  }
}

/** $PANTA_BASE_URL: one URL or several, comma-separated; unset or empty: the spec's. */
function envUrls(value: string | undefined): string[] | undefined {
  const urls = (value ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  return urls.length > 0 ? urls : undefined;
}
