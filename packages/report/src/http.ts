import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { InputError } from '@panta/core';
import type { PantaMetrics } from './metrics.js';

/** An HTTP server this process listens on. */
export interface Served {
  /** http://host:port/ (the port the kernel gave when 0 was asked). */
  url: string;
  port: number;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

/** Answers GET /metrics from the registry; false for any other path. */
export function metricsHandler(metrics: PantaMetrics): Handler {
  return async (req, res) => {
    if (pathOf(req) !== '/metrics') return false;
    const body = await metrics.text();
    res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
    res.end(body);
    return true;
  };
}

export function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://localhost').pathname;
}

/**
 * Listens on host:port and serves the handlers in turn (404 when none answers, 405 for anything but GET).
 * A port that cannot be had (in use, privileged) is bad input: an InputError naming the flag.
 */
export function listen(handlers: Handler[], port: number, host: string, flag: string): Promise<Served> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET' }).end();
        return;
      }
      for (const h of handlers) if (await h(req, res)) return;
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    })().catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`${(e as Error).message}\n`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new InputError(flag, '', `cannot listen on ${host}:${port} (${e.code ?? e.message})`, `give ${flag} a free port (0: any), or stop what holds it`)),
    );
    server.listen(port, host, () => {
      const address = server.address() as { port: number };
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${address.port}/`,
        port: address.port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** `--metrics-port`: this process's /metrics, alone on its own port. */
export function serveMetrics(metrics: PantaMetrics, port: number, host = '127.0.0.1'): Promise<Served> {
  return listen([metricsHandler(metrics)], port, host, '--metrics-port');
}
