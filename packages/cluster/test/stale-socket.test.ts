import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { nodeFetch } from '../../llm/src/node-fetch.js';

// A worker's calls to its model server reuse kept-alive sockets. A server closes an idle one after its
// keep-alive timeout; a request written on it at that moment (a worker whose event loop lags under load has
// not seen the close yet) is reset before the server read it. Under gpu-sim at load ~30, bursts of such
// resets tripped the endpoint's health breaker ("38 of its last 50 attempts failed (ECONNRESET)").

describe('a kept-alive socket the server reset', () => {
  it('the request goes again on another socket; a fresh socket reset is still an error', async () => {
    let connections = 0;
    const server = createServer((socket: Socket) => {
      const n = ++connections;
      let requests = 0;
      socket.on('data', (chunk) => {
        if (!chunk.includes('\r\n\r\n')) return;
        requests++;
        // The first connection serves one request, then resets at the next (as if closed while idle); the
        // third connection resets at once.
        if ((n === 1 && requests === 2) || n === 3) socket.resetAndDestroy();
        else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const fetch = nodeFetch(1);
      const url = `http://127.0.0.1:${port}/`;
      expect(await (await fetch(url)).text()).toBe('ok');
      // Written on connection 1, reset there, sent again on connection 2.
      expect(await (await fetch(url)).text()).toBe('ok');
      expect(connections).toBe(2);
      // A socket reset before it served anything is the server's doing: no second try.
      const again = nodeFetch(1);
      const error = await again(url).catch((e: unknown) => e as NodeJS.ErrnoException);
      expect(connections).toBe(3);
      expect((error as NodeJS.ErrnoException).code).toBe('ECONNRESET');
    } finally {
      server.close();
    }
  });
});
