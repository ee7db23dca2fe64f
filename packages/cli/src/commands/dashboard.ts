import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { StatusReader, UNREACHABLE_REPEAT_MS, redisUrl, shownUrl, type SweepStatus } from '@panta/cluster';
import { InputError } from '@panta/core';
import { CorpusProgress, isLoopbackHost, startDashboard, type ProgressReading, type SweepView } from '@panta/report';
import { EXIT, reportError } from '../errors.js';

export interface DashboardFlags {
  redis?: string;
  corpus?: string;
  port: number;
  host: string;
  /** Comma-separated host names answered besides localhost, IP addresses and the bound host. */
  allowedHosts?: string;
}

/**
 * `panta dashboard`: a live page of a distributed sweep (--redis: the status the scheduler keeps in Redis,
 * curves from the corpus folder the sweep writes) or of a corpus folder (--corpus: a sweep `panta run` is
 * writing, or any corpus). Both together: progress from Redis, curves from that folder. Serves until SIGTERM
 * or SIGINT.
 */
export async function dashboardCommand(opts: DashboardFlags): Promise<number> {
  const closers: (() => Promise<unknown>)[] = [];
  // An error read every second is said again every few seconds while it lasts, not once a second.
  const said = { line: '', at: 0 };
  const say = (line: string) => {
    const now = Date.now();
    if (line === said.line && now - said.at < UNREACHABLE_REPEAT_MS) return;
    said.line = line;
    said.at = now;
    process.stderr.write(`panta dashboard: ${line}\n`);
  };
  try {
    if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535)
      throw new InputError('--port', '', `${opts.port} is not a port`, 'give a port from 0 (any free one) to 65535');
    const allowedHosts = parseHosts(opts.allowedHosts);
    const corpus = opts.corpus === undefined ? undefined : new CorpusProgress(opts.corpus);
    const useRedis = opts.redis !== undefined || corpus === undefined;
    const { read, watching } = useRedis ? redisSource(opts.redis, corpus, closers) : corpusSource(corpus!);
    const dashboard = await startDashboard({
      port: opts.port,
      host: opts.host,
      allowedHosts,
      watching,
      read,
      onError: (e) => say(e.message.split('\n')[0]),
    });
    closers.unshift(() => dashboard.close());
    process.stderr.write(`panta dashboard: ${dashboard.url} (metrics: ${dashboard.url}metrics) watching ${watching}\n`);
    if (!isLoopbackHost(opts.host)) warnExposed(opts.host, dashboard.port);
    await untilSignal();
    return EXIT.ok;
  } catch (error) {
    return reportError(error);
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

/** The status the scheduler keeps in Redis, curves from `corpus` or else from each sweep's corpus folder. */
function redisSource(
  redisArg: string | undefined,
  corpus: CorpusProgress | undefined,
  closers: (() => Promise<unknown>)[],
): { read: () => Promise<ProgressReading>; watching: string } {
  const url = redisUrl(redisArg);
  const reader = new StatusReader(url);
  closers.push(() => reader.close());
  const watching = `Redis ${shownUrl(url)}${corpus ? ` · corpus ${corpus.dir}` : ''}`;
  const read = async (): Promise<ProgressReading> => {
    // Redis down: the page, /api/state and stderr say so at once (a read would wait for it to come back).
    const down = reader.unreachable();
    if (down !== undefined)
      throw new Error(`Redis at ${shownUrl(url)} is unreachable (${down}): retrying; start it, or give the right --redis URL`);
    const status = await withTimeout(reader.read(), READ_TIMEOUT_MS, () => {
      throw new Error(`Redis at ${shownUrl(url)} did not answer within ${READ_TIMEOUT_MS / 1000} s: retrying`);
    });
    const notes: string[] = [];
    let corpora: string[];
    if (corpus) corpora = [corpus.dir];
    else {
      corpora = [];
      for (const s of status.sweeps) {
        // Where its collector writes (its own --out), else the folder the scheduler was given.
        const out = s.collectorOut ?? s.out;
        if (!out) continue;
        const dir = resolve(out);
        if (existsSync(dir)) corpora.push(dir);
        else
          notes.push(
            `sweep ${s.id} writes ${out}, which this process does not see (${dir}): mount the corpus here or pass --corpus DIR for its curves`,
          );
      }
    }
    return { sweeps: status.sweeps.map(sweepView), queue: status.queue, corpora: [...new Set(corpora)], notes };
  };
  return { read, watching };
}

/** A corpus folder's progress (a sweep `panta run` is writing, or any corpus). */
function corpusSource(corpus: CorpusProgress): { read: () => Promise<ProgressReading>; watching: string } {
  return {
    watching: `corpus ${corpus.dir}`,
    read: async () => ({ sweeps: [await corpus.read()], corpora: [corpus.dir], notes: [] }),
  };
}

/** Says that a dashboard bound beyond loopback is seen by whoever reaches the machine. */
function warnExposed(host: string, port: number): void {
  const where = host === '0.0.0.0' || host === '::' ? 'every network interface' : host;
  process.stderr.write(
    `panta dashboard: warning: the dashboard is exposed on ${where}: whoever reaches this machine on port ${port} sees the sweeps it watches (no login); bind --host 127.0.0.1 unless that is intended\n`,
  );
}

/** Resolves on SIGTERM or SIGINT. */
function untilSignal(): Promise<void> {
  return new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      done();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

/** How long one reading of Redis may take before the dashboard says Redis does not answer. */
const READ_TIMEOUT_MS = 3000;

/** `p`, or what `late` returns (or throws) once `ms` have passed first. */
async function withTimeout<T>(p: Promise<T>, ms: number, late: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (e) {
        reject(e);
      }
    }, ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `--allowed-hosts a,b`: host names (no scheme, port or path). */
function parseHosts(list: string | undefined): string[] {
  if (list === undefined) return [];
  const names = list
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  for (const n of names) {
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)$/i.test(n))
      throw new InputError(
        '--allowed-hosts',
        '',
        `"${n}" is not a host name`,
        'give host names separated by commas, without scheme, port or path, e.g. --allowed-hosts panta.example.org,dash.lan',
      );
  }
  return names;
}

function sweepView(s: SweepStatus): SweepView {
  const age = s.schedulerAge;
  const live = age !== null && age <= 5 && s.phase !== 'done';
  return {
    id: s.id,
    name: s.name,
    phase: s.phase,
    live,
    liveNote:
      s.phase === 'done'
        ? 'sweep complete'
        : age === null
          ? 'no scheduler report yet'
          : live
            ? 'scheduler reporting'
            : `scheduler silent for ${age.toFixed(0)} s`,
    eventsWritten: s.eventsWritten,
    eventsTotal: s.eventsTotal,
    eventsPerSecond: live ? s.eventsPerSecond : 0,
    inflight: s.inflight,
    calls: s.calls,
    tokens: s.tokens,
    retries: s.retries,
    requeued: s.requeued,
    runsTotal: s.runsTotal,
    runsFinished: s.phase === 'done' ? s.runsTotal : s.runsFinished,
    runsActive: s.runsActive,
    runsFailed: s.runsFailed,
    runs: s.phase === 'done' ? [] : s.runs.map((r) => ({ run: r.run, written: r.written, total: null, inflight: r.inflight })),
    log: [],
  };
}
