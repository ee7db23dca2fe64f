import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy answers a request with instead of passing it on: a reply, or 'hang' (accepted, never answered). */
export type Fault = { status: number; body: string; type?: string } | 'hang';

export interface FaultProxy {
  /** http://127.0.0.1:PORT, no path. */
  url: string;
  close(): Promise<void>;
}

/**
 * A model server that misbehaves on demand, as a broken deployment or a login page in front of one does: each
 * request gets `fault(req)` where that gives one, and is otherwise passed to the model server at `target` (its
 * reply as it is, or a 502 while it is down).
 */
export async function startFaultProxy(target: string, fault: (req: IncomingMessage) => Fault | undefined): Promise<FaultProxy> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: string, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      };
      const f = fault(req);
      if (f === 'hang') return;
      if (f !== undefined) return send(f.status, f.body, f.type);
      const body = Buffer.concat(chunks);
      fetch(`${target}${req.url}`, {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        ...(body.length > 0 ? { body } : {}),
      }).then(
        async (r) => send(r.status, await r.text(), r.headers.get('content-type') ?? 'application/json'),
        () => send(502, '{"error":{"message":"model server down"}}'),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
