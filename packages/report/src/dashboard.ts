import type { ServerResponse } from 'node:http';
import { toError } from '@panta/core';
import { CurveCache, type CurvesView } from './dashboard-curves.js';
import { dashboardPage } from './dashboard-page.js';
import type { ProgressReading, QueueView, SweepView } from './dashboard-progress.js';
import { listen, metricsHandler, pathOf, type Served } from './http.js';
import { PantaMetrics } from './metrics.js';

export interface DashboardOptions {
  /** Port (0: any free port) and interface (default 127.0.0.1: this machine only). */
  port: number;
  host?: string;
  /**
   * Host names the page answers to besides localhost, IP addresses, this machine's name and `host` (default
   * none): a reverse proxy's name, say. Any other Host gets 403 (DNS rebinding).
   */
  allowedHosts?: string[];
  /** What is watched, shown in the page's header (a Redis URL, a corpus folder). */
  watching: string;
  /** Reads the progress of every sweep watched; called every `intervalMs`. */
  read(): Promise<ProgressReading>;
  /** Progress refresh (default 1000 ms). */
  intervalMs?: number;
  /** How often corpus folders are checked for newly complete runs to redraw the curves (default 3000 ms). */
  curvesIntervalMs?: number;
  /** Called when a read fails (the page shows the error too); the dashboard carries on. */
  onError?(error: Error): void;
}

/** What the page receives as a `progress` event (and GET /api/state answers). */
export interface DashboardState {
  watching: string;
  /** ms since the epoch of this reading. */
  at: number;
  error: string | null;
  notes: string[];
  queue?: QueueView;
  sweeps: SweepView[];
}

export interface Dashboard extends Served {
  readonly metrics: PantaMetrics;
  /** The latest reading (null before the first). */
  state(): DashboardState | null;
  curves(): CurvesView[];
}

/**
 * `panta dashboard`: serves a live page (GET /), its server-sent events (GET /events: `progress` every
 * second, `curves` when a corpus gains a complete run), the same as JSON (GET /api/state, /api/curves) and
 * Prometheus metrics of every sweep watched (GET /metrics). Reads never overlap; a failed read is shown and
 * retried at the next tick.
 */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const metrics = new PantaMetrics('dashboard');
  const cache = new CurveCache();
  const clients = new Set<ServerResponse>();
  let state: DashboardState | null = null;
  let corpora: string[] = [];
  const page = dashboardPage('Panta dashboard');

  const send = (res: ServerResponse, event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const broadcast = (event: string, data: unknown) => {
    for (const res of clients) send(res, event, data);
  };
  const curves = () => corpora.map((d) => cache.get(d)).filter((v): v is CurvesView => v !== undefined);

  let reading = false;
  const tick = async () => {
    if (reading) return;
    reading = true;
    try {
      const r = await options.read();
      corpora = r.corpora;
      state = { watching: options.watching, at: Date.now(), error: null, notes: r.notes, queue: r.queue, sweeps: r.sweeps };
      for (const s of r.sweeps)
        metrics.observe(s.id, {
          ...s,
          calls: s.calls ?? undefined,
          tokens: s.tokens ?? undefined,
          retries: s.retries ?? undefined,
          requeued: s.requeued ?? undefined,
        });
    } catch (e) {
      const error = toError(e);
      options.onError?.(error);
      state = { ...(state ?? { watching: options.watching, notes: [], sweeps: [] }), at: Date.now(), error: error.message.split('\n')[0] };
    } finally {
      reading = false;
    }
    broadcast('progress', state);
  };

  let drawing = false;
  const draw = async () => {
    if (drawing) return;
    drawing = true;
    try {
      let changed = false;
      for (const dir of corpora) changed = (await cache.refresh(dir)) || changed;
      if (changed) broadcast('curves', curves());
    } catch (e) {
      options.onError?.(toError(e));
    } finally {
      drawing = false;
    }
  };

  const served = await listen(
    [
      metricsHandler(metrics),
      (req, res) => {
        const path = pathOf(req);
        if (path === '/' || path === '/index.html') {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
        } else if (path === '/events') {
          res.writeHead(200, {
            'content-type': 'text/event-stream',
            'cache-control': 'no-store',
            connection: 'keep-alive',
            'x-accel-buffering': 'no',
          });
          res.write('retry: 2000\n\n');
          clients.add(res);
          req.once('close', () => clients.delete(res));
          if (state) send(res, 'progress', state);
          send(res, 'curves', curves());
        } else if (path === '/api/state') {
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(state));
        } else if (path === '/api/curves') {
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(curves()));
        } else if (path === '/healthz') {
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
        } else return false;
        return true;
      },
    ],
    options.port,
    options.host ?? '127.0.0.1',
    '--port',
    options.allowedHosts ?? [],
  );
  // The first reading before anyone is told the address: a page opened at once has progress to show.
  await tick();
  void draw();
  const timers = [
    setInterval(() => void tick(), options.intervalMs ?? 1000),
    setInterval(() => void draw(), options.curvesIntervalMs ?? 3000),
  ];

  return {
    ...served,
    metrics,
    state: () => state,
    curves,
    close: async () => {
      for (const t of timers) clearInterval(t);
      for (const res of clients) res.end();
      clients.clear();
      await served.close();
    },
  };
}
