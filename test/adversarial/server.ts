import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mulberry32 } from '../mulberry32.js';

/**
 * An OpenAI-compatible server whose answers Panta did not write, for end-to-end tests of what real models
 * do to a sweep. Written on plain node:http, sharing nothing with Panta's own surrogate server, so that a bug
 * in one cannot hide a bug in the other.
 *
 * Every answer is a function of the request body's bytes (a SHA-256), as vLLM's output is a function of its
 * seed: a retry of the same event gets the same answer.
 */
export type AdversarialMode =
  /** Fluent off-topic sentences that contain no accepted or known false answer of the datasets: all not_known. */
  | 'never-matching'
  /** Every reply is exactly "The answer is 96." */
  | 'identical'
  /** Content "" or whitespace only. */
  | 'empty'
  /** About 100,000 characters of words. */
  | 'huge'
  /** Bytes that are not UTF-8 inside the JSON string (the body claims UTF-8). */
  | 'non-utf8'
  /** NUL, ESC sequences, bidi overrides and lone surrogates, escaped in the JSON. */
  | 'control-chars'
  /** 401 on every call with a JSON error body echoing the Authorization header and the key verbatim. */
  | 'echo-key'
  /** 500 on every call with the key in the message and in a URL with credentials and a query. */
  | 'echo-key-500'
  /** Answers anything (off-topic); a judge call (the rubric) gets prose that no verdict parser accepts. */
  | 'unparsable-verdict'
  /** One of the answering modes above per request, chosen from the body's hash. */
  | 'mixed';

export interface AdversarialServer {
  /** Base URL ending in /v1. */
  url: string;
  /** Requests received so far (every path, every status). */
  requests: number;
  close(): Promise<void>;
}

export interface AdversarialOptions {
  mode: AdversarialMode;
  /** When set, a request without `Authorization: Bearer <apiKey>` gets 401 (not echoed, except in echo modes). */
  apiKey?: string;
  /** The model /v1/models lists (default "adversarial-1"). */
  model?: string;
  /** Port on 127.0.0.1 (default: any free one). */
  port?: number;
}

export const IDENTICAL_ANSWER = 'The answer is 96.';
export const HUGE_LENGTH = 100_000;

const ANSWERING: readonly AdversarialMode[] = ['never-matching', 'identical', 'empty', 'huge', 'non-utf8', 'control-chars'];

export async function startAdversarialServer(opts: AdversarialOptions): Promise<AdversarialServer> {
  const model = opts.model ?? 'adversarial-1';
  const state = { requests: 0 };
  const server = createServer((req, res) => {
    state.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(opts, model, req, Buffer.concat(chunks), res);
      } catch (err) {
        sendJson(res, 500, { error: { message: `adversarial server bug: ${String(err)}`, type: 'server_error' } });
      }
    });
  });
  // Keep-alive sockets would hold close() open until they time out.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function handle(opts: AdversarialOptions, model: string, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
  const path = (req.url ?? '').split('?')[0].replace(/\/+$/, '');
  const auth = req.headers.authorization ?? '';
  if (opts.mode === 'echo-key' || opts.mode === 'echo-key-500') return echoKey(opts.mode, auth, res);
  if (opts.apiKey !== undefined && auth !== `Bearer ${opts.apiKey}`) {
    return sendJson(res, 401, { error: { message: 'Invalid API key.', type: 'invalid_request_error', code: 'invalid_api_key' } });
  }
  if (req.method === 'GET' && path === '/v1/models') {
    return sendJson(res, 200, {
      object: 'list',
      data: [{ id: model, object: 'model', created: 0, owned_by: 'vllm', max_model_len: 32768 }],
    });
  }
  if (req.method !== 'POST' || path !== '/v1/chat/completions') {
    return sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'not_found' } });
  }
  let request: ChatBody;
  try {
    request = JSON.parse(body.toString('utf8')) as ChatBody;
  } catch {
    return sendJson(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
  }
  if (!Array.isArray(request.messages))
    return sendJson(res, 400, { error: { message: 'messages is required', type: 'invalid_request_error' } });
  if (request.stream === true)
    return sendJson(res, 400, { error: { message: 'streaming is not served here', type: 'invalid_request_error' } });
  const hash = createHash('sha256').update(body).digest();
  const mode = opts.mode === 'mixed' ? ANSWERING[hash.readUInt32BE(28) % ANSWERING.length] : opts.mode;
  const answer = answerFor(mode, hash, isJudgeCall(request));
  const promptChars = request.messages.reduce((n, m) => n + (typeof m?.content === 'string' ? m.content.length : 0), 0);
  const completion = {
    id: `chatcmpl-${hash.toString('hex', 0, 12)}`,
    object: 'chat.completion',
    created: 0,
    model: typeof request.model === 'string' ? request.model : model,
    choices: [{ index: 0, message: { role: 'assistant', content: PLACEHOLDER }, finish_reason: 'stop' }],
    usage: { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: Math.max(1, Math.ceil(answer.length / 4)), total_tokens: 0 },
  };
  completion.usage.total_tokens = completion.usage.prompt_tokens + completion.usage.completion_tokens;
  // The content goes in as bytes: for non-utf8 they are not UTF-8, which JSON.stringify cannot express.
  const [before, after] = JSON.stringify(completion).split(JSON.stringify(PLACEHOLDER)) as [string, string];
  const content =
    typeof answer === 'string' ? Buffer.from(JSON.stringify(answer), 'utf8') : Buffer.concat([Buffer.from('"'), answer, Buffer.from('"')]);
  const bytes = Buffer.concat([Buffer.from(before, 'utf8'), content, Buffer.from(after, 'utf8')]);
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': bytes.length });
  res.end(bytes);
}

interface ChatBody {
  model?: unknown;
  messages?: { role?: unknown; content?: unknown }[];
  stream?: unknown;
}

const PLACEHOLDER = '\u0001adversarial-content\u0001';

/** The LLM judge's rubric (core/src/rubric.ts) asks for a verdict in JSON; any grader prompt looks alike. */
function isJudgeCall(request: ChatBody): boolean {
  return (request.messages ?? []).some(
    (m) => typeof m?.content === 'string' && (/Verdict \(JSON\):\s*$/.test(m.content) || m.content.startsWith('You grade one answer')),
  );
}

function echoKey(mode: 'echo-key' | 'echo-key-500', auth: string, res: ServerResponse): void {
  const key = auth.replace(/^Bearer\s+/i, '');
  if (mode === 'echo-key') {
    return sendJson(res, 401, {
      error: {
        message: `Incorrect API key provided: ${key}. The header was "Authorization: ${auth}".`,
        type: 'invalid_request_error',
        param: auth,
        code: 'invalid_api_key',
      },
    });
  }
  sendJson(res, 500, {
    error: {
      message: `upstream https://panta:${key}@upstream.invalid/v1/chat/completions?api_key=${encodeURIComponent(key)} failed (authorization: ${auth})`,
      type: 'server_error',
      upstream: `https://upstream.invalid/v1?key=${key}`,
    },
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length });
  res.end(bytes);
}

/** A string is sent JSON-escaped; a Buffer is sent as raw bytes inside the JSON string's quotes. */
export function answerFor(mode: AdversarialMode, hash: Buffer, judgeCall: boolean): string | Buffer {
  const rand = mulberry32(hash.readUInt32BE(0)); // seeded by the body: answers depend on it and nothing else
  switch (mode) {
    case 'identical':
      return IDENTICAL_ANSWER;
    case 'empty':
      return ['', '', ' ', '\n\n', ' \t \n'][hash[4] % 5];
    case 'huge':
      return hugeText(rand);
    case 'non-utf8':
      return nonUtf8(rand);
    case 'control-chars':
      return controlChars(rand);
    case 'unparsable-verdict':
      return judgeCall ? pick(rand, UNPARSABLE_VERDICTS) : offTopic(rand);
    default:
      return offTopic(rand);
  }
}

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)];
}

// Words chosen to contain no accepted or known false answer of datasets/*.jsonl as whole words (no numbers,
// no yes/no/none/one, no country or person names): test/adversarial/server.test.ts checks every prompt.
const SUBJECTS = [
  'Marmalade',
  'A good sourdough starter',
  'The harbour lighthouse',
  'Fresh basil',
  'My grandmother’s teapot',
  'A patient gardener',
  'The old tram line',
  'Autumn fog',
  'A well-oiled bicycle chain',
  'Quiet libraries',
];
const VERBS = [
  'keeps best',
  'tends to improve',
  'looks lovely',
  'smells wonderful',
  'rarely complains',
  'always hums',
  'slowly settles',
  'feels calmer',
];
const PLACES = [
  'beside the oat tins',
  'after a long walk',
  'under a linen cloth',
  'in late spring',
  'near the window sill',
  'on rainy afternoons',
  'when the kettle sings',
  'behind the garden shed',
];
const CODAS = [
  ', or so they say.',
  '.',
  ', which is pleasant enough.',
  ', much like warm bread.',
  '; it is hard to explain.',
  ', as every baker knows.',
];

function offTopic(rand: () => number): string {
  const sentences = 1 + Math.floor(rand() * 3);
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) out.push(`${pick(rand, SUBJECTS)} ${pick(rand, VERBS)} ${pick(rand, PLACES)}${pick(rand, CODAS)}`);
  return out.join(' ');
}

const UNPARSABLE_VERDICTS = [
  'Hard to say; the answer wanders, and I would rather not commit to a grade here.',
  'This one is partly right and partly off, so I will leave the verdict to a person.',
  'Grading: it depends on what the question meant. Perhaps ask again with more context.',
  'The tag would be somewhere between the options you listed; I cannot choose just one.',
  '{"grade": "maybe"} is the closest I can get.',
  'verdict pending',
];

function hugeText(rand: () => number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < HUGE_LENGTH) {
    const s = `${offTopic(rand)} `;
    parts.push(s);
    length += s.length;
  }
  return parts.join('').slice(0, HUGE_LENGTH);
}

/** Latin-1 bytes, lone continuation bytes, a truncated sequence, an overlong NUL and a UTF-16 surrogate in UTF-8. */
function nonUtf8(rand: () => number): Buffer {
  const pieces = [
    Buffer.from('The r\xe9sum\xe9 says caf\xe9 ', 'latin1'),
    Buffer.from([0xff, 0xfe, 0x20]),
    Buffer.from([0x80, 0xbf, 0x20]),
    Buffer.from([0xe2, 0x82, 0x20]),
    Buffer.from([0xc0, 0x80, 0x20]),
    Buffer.from([0xed, 0xa0, 0x80, 0x20]),
    Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  ];
  const out: Buffer[] = [];
  const n = 2 + Math.floor(rand() * 4);
  for (let i = 0; i < n; i++) out.push(pick(rand, pieces));
  // Sometimes nothing but invalid bytes: the decoded text is replacement characters only.
  if (rand() < 0.75) out.push(Buffer.from(offTopic(rand), 'utf8'));
  return Buffer.concat(out);
}

function controlChars(rand: () => number): string {
  const pieces = [
    '\u0000',
    '\u001b[31m',
    '\u001b[0m',
    '\u001b]0;title\u0007',
    '\ud800',
    '\udfff',
    '\u202e',
    '\ufeff',
    '\r',
    '\u2028',
    '\u0008\u0008',
    '\u007f',
    '\ufffe',
    '\u{10ffff}',
  ];
  const out: string[] = [];
  const n = 3 + Math.floor(rand() * 6);
  for (let i = 0; i < n; i++) out.push(pick(rand, pieces));
  out.splice(Math.floor(rand() * out.length), 0, offTopic(rand));
  return out.join('');
}
