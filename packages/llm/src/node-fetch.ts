import http from 'node:http';
import https from 'node:https';

/**
 * The little of `fetch` the LLM SDKs use, on node:http with a keep-alive agent. Node's global fetch (undici
 * with WebStreams) spends more of the client's CPU on each call, and at thousands of calls per second the
 * client's CPU, not the server, is the limit (bench/NOTES.md). Bodies are read whole (no streaming is asked
 * for); an aborted signal (the SDK's timeout) destroys the request and rejects, as fetch does. The reply is a
 * BufferedResponse, not undici's Response: building one (its Headers, a ReadableStream over the bytes,
 * reading that stream back in json()) cost the worker about a third of each call's client CPU
 * (bench/NOTES.md: replies without undici).
 */
/** Kept-alive sockets found closed by the server, one after the other, before a request is given up (see send). */
const STALE_SOCKET_RETRIES = 3;

export function nodeFetch(maxSockets: number): typeof fetch {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets }),
    'https:': new https.Agent({ keepAlive: true, maxSockets }),
  };
  const fetchImpl = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const headers: Record<string, string> = {};
    const given = init.headers;
    if (given instanceof Headers) given.forEach((value, key) => (headers[key] = value));
    else if (given) new Headers(given).forEach((value, key) => (headers[key] = value));
    const client = url.protocol === 'https:' ? https : http;
    const send = (resets: number): Promise<Response> =>
      new Promise<Response>((resolve, reject) => {
        let responded = false;
        const req = client.request(
          url,
          { method: init.method ?? 'GET', headers, agent: agents[url.protocol as 'http:' | 'https:'], signal: init.signal ?? undefined },
          (res) => {
            responded = true;
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', reject);
            res.on('close', () => {
              if (!res.complete)
                reject(Object.assign(new Error('the connection closed before the response ended'), { code: 'ECONNRESET' }));
            });
            res.on('end', () => {
              const status = res.statusCode ?? 500;
              const bytes = status === 204 || status === 304 ? null : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
              resolve(
                new BufferedResponse(
                  status,
                  res.statusMessage ?? '',
                  new ReplyHeaders(res.headers),
                  bytes,
                  url.href,
                ) as unknown as Response,
              );
            });
          },
        );
        req.on('error', (err: NodeJS.ErrnoException) => {
          // A kept-alive socket the server closed while it sat idle (its keep-alive timeout, raced by this write;
          // a client whose event loop lags under load has not yet seen the close): the request never reached
          // the server, so it goes again, on another socket (Node's documented `reusedSocket` check).
          if (
            !responded &&
            req.reusedSocket &&
            (err.code === 'ECONNRESET' || err.code === 'EPIPE') &&
            resets < STALE_SOCKET_RETRIES &&
            !init.signal?.aborted
          )
            resolve(send(resets + 1));
          else reject(err);
        });
        const body = init.body;
        if (body === undefined || body === null) req.end();
        else if (typeof body === 'string' || body instanceof Uint8Array) req.end(body);
        else reject(new TypeError('nodeFetch sends string or byte bodies only'));
      });
    return send(0);
  };
  return fetchImpl as typeof fetch;
}

/** UTF-8 as fetch decodes a body: a leading BOM dropped, an invalid sequence as U+FFFD. */
const utf8 = new TextDecoder();

/**
 * A reply read whole, with the part of Response's interface the SDKs read: status, ok, statusText, url,
 * headers, text() and json() (each body read once, as fetch allows), arrayBuffer(), and `body` null (no
 * stream: the SDKs only cancel it, which a null body skips).
 */
export class BufferedResponse {
  readonly body = null;
  readonly redirected = false;
  readonly type = 'basic';
  private used = false;

  constructor(
    readonly status: number,
    readonly statusText: string,
    readonly headers: ReplyHeaders,
    private readonly bytes: Buffer | null,
    readonly url: string,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get bodyUsed(): boolean {
    return this.used;
  }

  private take(): Buffer {
    if (this.used) throw new TypeError('Body is unusable: Body has already been read');
    this.used = true;
    return this.bytes ?? Buffer.alloc(0);
  }

  async text(): Promise<string> {
    return utf8.decode(this.take());
  }

  /** A body that is not JSON rejects with a SyntaxError that quotes its first 200 characters (the cause a stop names). */
  async json(): Promise<unknown> {
    const text = await this.text();
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new SyntaxError(`${(e as Error).message}; the reply began ${JSON.stringify(text.slice(0, 200))}`);
    }
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.take();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }
}

/**
 * A reply's headers as Headers reads them: names case-insensitive, a repeated header's values joined with ", "
 * (node:http already lowercases names, and joins most repeated ones itself).
 */
export class ReplyHeaders {
  private readonly values = new Map<string, string>();

  constructor(raw: http.IncomingHttpHeaders) {
    for (const [key, value] of Object.entries(raw))
      if (value !== undefined) this.values.set(key.toLowerCase(), Array.isArray(value) ? value.join(', ') : value);
  }

  get(name: string): string | null {
    return this.values.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.values.has(name.toLowerCase());
  }

  forEach(callback: (value: string, name: string, headers: ReplyHeaders) => void): void {
    for (const [name, value] of this.entries()) callback(value, name, this);
  }

  /** In name order, as Headers iterates. */
  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.values.keys()].sort()) yield [name, this.values.get(name)!];
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}
