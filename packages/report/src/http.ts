import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
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

/** A host name or address as a URL spells it: lower case, an IPv6 address in brackets, no trailing dot. */
function hostKey(name: string): string {
  const h = name.trim().toLowerCase().replace(/\.$/, '');
  return isIP(h) === 6 ? `[${h}]` : h;
}

/** The name of a Host header without its port ("[::1]:8080" -> "[::1]"). */
function hostOfHeader(header: string): string {
  const h = header.trim();
  if (h.startsWith('[')) return hostKey(h.slice(0, h.indexOf(']') + 1));
  const colon = h.lastIndexOf(':');
  return hostKey(colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h);
}

/**
 * DNS rebinding: a page of any site can point its own name at 127.0.0.1 and read what a local server
 * answers. Its requests carry that name in Host, so a server that answers only the names it is known by is
 * out of reach. Allowed: localhost (and *.localhost), this machine's name, the bound host, the names given,
 * and any IP address (an address is not a name an attacker can rebind). A request without Host (HTTP/1.0,
 * not a browser) is answered.
 */
export function hostAllowed(header: string | undefined, allowed: readonly string[]): boolean {
  if (header === undefined || header === '') return true;
  const name = hostOfHeader(header);
  if (name === 'localhost' || name.endsWith('.localhost') || isIP(name.replace(/^\[|\]$/g, '')) !== 0) return true;
  return name === hostKey(hostname()) || allowed.some((a) => hostKey(a) === name);
}

/** Whether binding `host` keeps a server to this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Listens on host:port and serves the handlers in turn (404 when none answers, 405 for anything but GET).
 * With `allowedHosts`, a request whose Host is not allowed (see hostAllowed; the bound host always is) gets
 * 403 and one line saying why. A port that cannot be had (in use, privileged) is bad input: an InputError
 * naming the flag.
 */
export function listen(handlers: Handler[], port: number, host: string, flag: string, allowedHosts?: readonly string[]): Promise<Served> {
  const allowed = allowedHosts && [host, ...allowedHosts];
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (allowed && !hostAllowed(req.headers.host, allowed)) {
        const name = hostOfHeader(req.headers.host!).slice(0, 100);
        res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(
          `host "${name}" is not one this server answers to (DNS rebinding protection); fix: open it as localhost or by its IP address, or start it with --allowed-hosts ${name}\n`,
        );
        return;
      }
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
      reject(
        new InputError(
          flag,
          '',
          `cannot listen on ${host}:${port} (${e.code ?? e.message})`,
          `give ${flag} a free port (0: any), or stop what holds it`,
        ),
      ),
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
