import http from 'node:http';
import https from 'node:https';

/**
 * The little of `fetch` the LLM SDKs use, on node:http with a keep-alive agent. Node's global fetch (undici
 * with WebStreams) spends more of the client's CPU on each call, and at thousands of calls per second the
 * client's CPU, not the server, is the limit (bench/NOTES.md). Bodies are read whole (no streaming is asked
 * for); an aborted signal (the SDK's timeout) destroys the request and rejects, as fetch does.
 */
export function nodeFetch(maxSockets: number): typeof fetch {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets }),
    'https:': new https.Agent({ keepAlive: true, maxSockets }),
  };
  const fetchImpl = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => (headers[key] = value));
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const req = client.request(
        url,
        { method: init.method ?? 'GET', headers, agent: agents[url.protocol as 'http:' | 'https:'], signal: init.signal ?? undefined },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('close', () => {
            if (!res.complete) reject(Object.assign(new Error('the connection closed before the response ended'), { code: 'ECONNRESET' }));
          });
          res.on('end', () => {
            const out = new Headers();
            for (const [key, value] of Object.entries(res.headers))
              if (value !== undefined) out.set(key, Array.isArray(value) ? value.join(', ') : value);
            const status = res.statusCode ?? 500;
            resolve(
              new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), {
                status,
                statusText: res.statusMessage ?? '',
                headers: out,
              }),
            );
          });
        },
      );
      req.on('error', reject);
      const body = init.body;
      if (body === undefined || body === null) req.end();
      else if (typeof body === 'string' || body instanceof Uint8Array) req.end(body);
      else reject(new TypeError('nodeFetch sends string or byte bodies only'));
    });
  };
  return fetchImpl as typeof fetch;
}
