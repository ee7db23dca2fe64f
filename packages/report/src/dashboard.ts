import type { IncomingMessage, ServerResponse } from 'node:http';
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
  const live = new LiveDashboard(options);
  const served = await listen(
    [metricsHandler(live.metrics), (req, res) => live.handle(req, res)],
    options.port,
    options.host ?? '127.0.0.1',
    '--port',
    options.allowedHosts ?? [],
  );
  // The first reading before anyone is told the address: a page opened at once has progress to show.
  await live.tick();
  void live.draw();
  const timers = [
    setInterval(() => void live.tick(), options.intervalMs ?? 1000),
    setInterval(() => void live.draw(), options.curvesIntervalMs ?? 3000),
  ];

  return {
    ...served,
    metrics: live.metrics,
    state: () => live.state,
    curves: () => live.curves(),
    close: async () => {
      for (const t of timers) clearInterval(t);
      live.endStreams();
      await served.close();
    },
  };
}

/** What the dashboard has read (progress, the corpora's curves) and the pages and streams that show it. */
class LiveDashboard {
  readonly metrics = new PantaMetrics('dashboard');
  state: DashboardState | null = null;
  private readonly cache = new CurveCache();
  private readonly clients = new Set<ServerResponse>();
  private corpora: string[] = [];
  private readonly page = dashboardPage('Panta dashboard');
  private reading = false;
  private drawing = false;

  constructor(private readonly options: DashboardOptions) {}

  curves(): CurvesView[] {
    return this.corpora.map((d) => this.cache.get(d)).filter((v): v is CurvesView => v !== undefined);
  }

  endStreams(): void {
    for (const res of this.clients) res.end();
    this.clients.clear();
  }

  /** Reads the progress (never two reads at once), observes it in the metrics, and streams it; a failed read is shown. */
  async tick(): Promise<void> {
    const { options, metrics } = this;
    if (this.reading) return;
    this.reading = true;
    try {
      const r = await options.read();
      this.corpora = r.corpora;
      this.state = { watching: options.watching, at: Date.now(), error: null, notes: r.notes, queue: r.queue, sweeps: r.sweeps };
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
      this.state = {
        ...(this.state ?? { watching: options.watching, notes: [], sweeps: [] }),
        at: Date.now(),
        error: error.message.split('\n')[0],
      };
    } finally {
      this.reading = false;
    }
    this.broadcast('progress', this.state);
  }

  /** Refreshes the corpora's curves (never two at once) and streams them when one gained a complete run. */
  async draw(): Promise<void> {
    if (this.drawing) return;
    this.drawing = true;
    try {
      let changed = false;
      for (const dir of this.corpora) changed = (await this.cache.refresh(dir)) || changed;
      if (changed) this.broadcast('curves', this.curves());
    } catch (e) {
      this.options.onError?.(toError(e));
    } finally {
      this.drawing = false;
    }
  }

  /** The page, its event stream, the JSON views and a health check; false for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const path = pathOf(req);
    if (path === '/' || path === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(this.page);
    } else if (path === '/events') {
      this.stream(req, res);
    } else if (path === '/api/state') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(this.state));
    } else if (path === '/api/curves') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(this.curves()));
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else return false;
    return true;
  }

  private stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    this.clients.add(res);
    req.once('close', () => this.clients.delete(res));
    if (this.state) send(res, 'progress', this.state);
    send(res, 'curves', this.curves());
  }

  private broadcast(event: string, data: unknown): void {
    for (const res of this.clients) send(res, event, data);
  }
}

function send(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}
