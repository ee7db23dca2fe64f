import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeFetch } from '../src/node-fetch.js';

// What the SDKs read of a reply, from a real server, compared with Node's own fetch on the same replies.
let server: Server;
let base = '';
const replies: Record<string, (res: import('node:http').ServerResponse) => void> = {
  '/json': (res) => {
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('X-Request-Id', 'req-1');
    res.setHeader('Retry-After', '3');
    res.end(JSON.stringify({ ok: 'é', n: 1 }));
  },
  // A leading BOM and a byte that is not UTF-8: decoded as fetch decodes them.
  '/bom': (res) =>
    res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"x'), Buffer.from([0xff]), Buffer.from('"}')])),
  '/empty': (res) => {
    res.statusCode = 204;
    res.end();
  },
  '/status': (res) => {
    res.statusCode = 503;
    res.statusMessage = 'Overloaded';
    res.setHeader('Retry-After-Ms', '250');
    res.end('{"error":{"message":"busy"}}');
  },
  '/chunks': (res) => {
    res.write('{"parts":[');
    setTimeout(() => res.end('1,2,3]}'), 5);
  },
  '/cut': (res) => {
    res.setHeader('Content-Length', '100');
    res.write('{"half":');
    setTimeout(() => res.socket?.destroy(), 5);
  },
  '/hang': () => undefined,
};

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/echo') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () =>
        res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, type: req.headers['content-type'], body })),
      );
      return;
    }
    replies[req.url ?? '']?.(res);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('nodeFetch', () => {
  const f = nodeFetch(4);

  it('reads status, headers and a JSON body as fetch does', async () => {
    for (const path of ['/json', '/bom', '/status', '/chunks']) {
      const [ours, theirs] = [await f(`${base}${path}`), await fetch(`${base}${path}`)];
      expect([ours.status, ours.ok, ours.statusText, ours.url], path).toEqual([theirs.status, theirs.ok, theirs.statusText, theirs.url]);
      for (const name of ['content-type', 'Content-Type', 'x-request-id', 'retry-after', 'retry-after-ms', 'missing'])
        expect(ours.headers.get(name), `${path} ${name}`).toBe(theirs.headers.get(name));
      const names = (h: Headers) => [...h.entries()].map(([k]) => k).filter((k) => k !== 'date' && k !== 'keep-alive');
      expect(names(ours.headers)).toEqual(names(theirs.headers));
      expect(await ours.text()).toBe(await theirs.text());
      expect(ours.bodyUsed).toBe(true);
      await expect(ours.text()).rejects.toThrow(TypeError);
    }
    expect(await (await f(`${base}/json`)).json()).toEqual({ ok: 'é', n: 1 });
    expect(await (await f(`${base}/bom`)).json()).toEqual({ a: 'x\uFFFD' });
  });

  it('has no body for 204, sends the method, headers and body given', async () => {
    const empty = await f(`${base}/empty`);
    expect([empty.status, empty.body, await empty.text()]).toEqual([204, null, '']);
    const echo = await f(`${base}/echo`, {
      method: 'POST',
      headers: new Headers({ Authorization: 'Bearer k', 'Content-Type': 'application/json' }),
      body: '{"q":1}',
    });
    expect(await echo.json()).toEqual({ method: 'POST', auth: 'Bearer k', type: 'application/json', body: '{"q":1}' });
    const plain = await f(`${base}/echo`, { method: 'POST', headers: { authorization: 'Bearer p' }, body: new TextEncoder().encode('x') });
    expect(await plain.json()).toMatchObject({ auth: 'Bearer p', body: 'x' });
  });

  it('rejects a reply cut short, and an aborted request', async () => {
    await expect(f(`${base}/cut`)).rejects.toMatchObject({ code: 'ECONNRESET' });
    const controller = new AbortController();
    const pending = f(`${base}/hang`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
