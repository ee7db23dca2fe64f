import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicError, messageBody, parseMessages } from './anthropic.js';
import { FaultInjector, type FaultDraw } from './faults.js';
import { ContinuousBatching, delay, FixedLatency, type LatencyModel } from './latency.js';
import { chatCompletionBody, openaiError, parseChatCompletion } from './openai.js';
import { SurrogateResponder } from './responder.js';
import { estimateTokenIds, padToTokens, VllmModel } from './vllm-model.js';
import {
  FAULT_KINDS,
  RequestError,
  type FaultKind,
  type GenerationRequest,
  type GenerationResult,
  type ServerStats,
  type SurrogateServerOptions,
} from './types.js';

export interface SurrogateServer {
  /** Origin, e.g. http://127.0.0.1:8000: OpenAI clients use `${url}/v1` as base URL, Anthropic clients `url`. */
  url: string;
  port: number;
  /** The model id served. */
  model: string;
  /** Prompts (questions) the agent knows. */
  promptCount: number;
  stats(): ServerStats;
  /** Stops listening, drops open connections (hung requests included) and the batch. */
  close(): Promise<void>;
}

/** One API the server speaks: how to read a request, write a reply, and shape an error. */
interface Api {
  parse(body: unknown, model: string): GenerationRequest;
  reply(result: GenerationResult, model: string, empty: boolean): Record<string, unknown>;
  error(status: number, message: string, param?: string): Record<string, unknown>;
}

const OPENAI: Api = { parse: parseChatCompletion, reply: chatCompletionBody, error: openaiError };
const ANTHROPIC: Api = { parse: parseMessages, reply: messageBody, error: (status, message) => anthropicError(status, message) };

const ENDPOINTS = ['GET /v1/models', 'POST /v1/chat/completions', 'POST /v1/messages', 'other'] as const;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendText(res, status, JSON.stringify(body), headers);
}

function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

class BodyTooLarge extends Error {}

function checkOptions(o: SurrogateServerOptions): void {
  const bad = (what: string) => {
    throw new RangeError(`startSurrogateServer: ${what}`);
  };
  for (const key of ['latencyMs', 'tokenMs', 'batchSlowdown'] as const) {
    const v = o[key];
    if (v !== undefined && !(Number.isFinite(v) && v >= 0)) bad(`${key} must be a number >= 0, got ${v}`);
  }
  if (o.slots !== undefined && !(Number.isSafeInteger(o.slots) && o.slots >= 0)) bad(`slots must be an integer >= 0, got ${o.slots}`);
  if (!o.slots && ((o.tokenMs ?? 0) > 0 || (o.batchSlowdown ?? 0) > 0))
    bad('tokenMs and batchSlowdown need slots > 0 (continuous batching)');
  if (o.timeScale !== undefined && !(Number.isFinite(o.timeScale) && o.timeScale > 0))
    bad(`timeScale must be a number > 0, got ${o.timeScale}`);
  if (o.schedulingPolicy !== undefined && o.schedulingPolicy !== 'fcfs' && o.schedulingPolicy !== 'priority')
    bad(`schedulingPolicy must be fcfs or priority, got ${JSON.stringify(o.schedulingPolicy)}`);
  if (o.costModel && (o.slots || o.latencyMs)) bad('costModel replaces slots and latencyMs: give one or the other');
  if (o.faults) {
    if (!(o.faults.rate >= 0 && o.faults.rate <= 1)) bad(`faults.rate must be in 0..1, got ${o.faults.rate}`);
    const unknown = (o.faults.kinds ?? []).find((k) => !(FAULT_KINDS as readonly string[]).includes(k));
    if (unknown !== undefined) bad(`unknown fault kind ${JSON.stringify(unknown)} (known: ${FAULT_KINDS.join(', ')})`);
  }
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BodyTooLarge());
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    req.on('close', () => reject(new Error('client went away')));
  });
}

/**
 * Serves the surrogate agent over HTTP: OpenAI-compatible (GET /v1/models, POST
 * /v1/chat/completions) and Anthropic-compatible (POST /v1/messages). Every reply is exactly what the
 * in-process surrogate backend gives for the same seed, temperature and prompt, text and token counts alike.
 * Optional: a latency model (fixed per call, or vLLM-like continuous batching) and seeded fault injection.
 */
export async function startSurrogateServer(options: SurrogateServerOptions): Promise<SurrogateServer> {
  checkOptions(options);
  const surrogate = new SurrogateHttp(options);
  const server = createServer((req, res) => surrogate.handle(req, res));
  // Clients keep connections across calls; close() drops them all, hung requests (the timeout fault) included.
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${address.port}`,
    port: address.port,
    model: surrogate.model,
    promptCount: surrogate.responder.promptCount,
    stats: () => surrogate.currentStats(),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        surrogate.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Applies a fault that replaces the reply; false if the fault comes after generation (malformed, empty). */
function failEarly(fault: FaultDraw, api: Api, req: IncomingMessage, res: ServerResponse): boolean {
  switch (fault.kind) {
    case '429': {
      const headers: Record<string, string> = { 'retry-after': '1' };
      if (fault.variant < 0.5) headers['retry-after-ms'] = String(100 + Math.floor(fault.variant * 1600));
      sendJson(res, 429, api.error(429, 'Rate limit reached (injected by the surrogate server)'), headers);
      return true;
    }
    case '500':
      sendJson(res, 500, api.error(500, 'Internal server error (injected by the surrogate server)'));
      return true;
    case '503':
      sendJson(res, 503, api.error(503, 'Service unavailable (injected by the surrogate server)'));
      return true;
    case 'timeout':
      // Accept and never answer; the request ends when the client gives up and closes the socket.
      return true;
    case 'reset':
      req.socket.destroy();
      return true;
    default:
      return false;
  }
}

/** A request's answer: what was asked, the surrogate's reply, and the fault drawn for it. */
interface Answered {
  request: GenerationRequest;
  result: GenerationResult;
  fault: FaultDraw | undefined;
}

/** The server's state (its responder, latency models, fault injector and counters) and its request handlers. */
class SurrogateHttp {
  readonly responder: SurrogateResponder;
  readonly model: string;
  private readonly latency: LatencyModel | undefined;
  /** With continuous batching, latencyMs is added to every call. */
  private readonly extraMs: number;
  private readonly policy: 'fcfs' | 'priority';
  private readonly vllm: VllmModel | undefined;
  private readonly faults: FaultInjector | undefined;
  private readonly maxBody: number;
  private readonly stats: ServerStats = {
    requests: 0,
    byEndpoint: Object.fromEntries(ENDPOINTS.map((e) => [e, 0])),
    faults: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>,
    completed: 0,
    badRequests: 0,
    open: 0,
    maxConcurrent: 0,
    promptTokens: 0,
    completionTokens: 0,
  };
  private requestIds = 0;

  constructor(options: SurrogateServerOptions) {
    this.responder = new SurrogateResponder(options);
    this.model = this.responder.model;
    const latencyMs = options.latencyMs ?? 0;
    const slots = options.slots ?? 0;
    this.latency =
      slots > 0
        ? new ContinuousBatching(slots, options.tokenMs ?? 0, options.batchSlowdown ?? 0)
        : latencyMs > 0
          ? new FixedLatency(latencyMs)
          : undefined;
    this.extraMs = slots > 0 ? latencyMs : 0;
    this.policy = options.schedulingPolicy ?? 'fcfs';
    this.vllm = options.costModel ? new VllmModel(options.costModel, this.policy, options.timeScale ?? 1) : undefined;
    this.faults =
      options.faults && options.faults.rate > 0
        ? new FaultInjector(options.faults.rate, options.faults.kinds, options.faults.seed ?? 0)
        : undefined;
    this.maxBody = options.maxBodyBytes ?? 64 * 1024 * 1024;
  }

  close(): void {
    this.latency?.close();
    this.vllm?.close();
  }

  currentStats(): ServerStats {
    const { stats, latency, vllm } = this;
    const s = { ...stats, byEndpoint: { ...stats.byEndpoint }, faults: { ...stats.faults } };
    const batch = latency?.stats();
    const withBatch: ServerStats = batch ? { ...s, batch } : s;
    return vllm ? { ...withBatch, vllm: vllm.stats() } : withBatch;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const { stats } = this;
    stats.requests++;
    stats.open++;
    if (stats.open > stats.maxConcurrent) stats.maxConcurrent = stats.open;
    const abort = new AbortController();
    res.on('close', () => {
      stats.open--;
      if (!res.writableFinished) abort.abort();
    });
    const id = `req_${(++this.requestIds).toString(36)}`;
    res.setHeader('x-request-id', id);
    res.setHeader('request-id', id);
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
    const route = `${req.method} ${path}`;
    const api = path === '/v1/messages' ? ANTHROPIC : OPENAI;
    const endpoint = (ENDPOINTS as readonly string[]).includes(route) ? route : 'other';
    stats.byEndpoint[endpoint]++;
    if (route === 'GET /v1/models') return this.models(res);
    if (route === 'GET /health' || route === 'GET /v1/health') return sendText(res, 200, '{}');
    // The server's own counters (requests, faults, slot occupancy), for benchmarks run against a separate process.
    if (route === 'GET /panta/stats') return sendText(res, 200, JSON.stringify(this.currentStats()));
    // vLLM's Prometheus metrics, with a cost model only (a plain surrogate has no queue to report).
    if (route === 'GET /metrics' && this.vllm) return this.metrics(this.vllm, res);
    if (route === 'POST /v1/chat/completions' || route === 'POST /v1/messages') {
      this.generate(api, req, res, abort.signal).catch((e: unknown) => {
        sendJson(res, 500, api.error(500, `surrogate server: ${(e as Error).message}`));
      });
      return;
    }
    this.noRoute(api, req, res, path, route);
  }

  private noRoute(api: Api, req: IncomingMessage, res: ServerResponse, path: string, route: string): void {
    req.resume();
    this.stats.badRequests++;
    const known = path === '/v1/models' || path === '/v1/chat/completions' || path === '/v1/messages';
    sendJson(
      res,
      known ? 405 : 404,
      api.error(
        known ? 405 : 404,
        known
          ? `${req.method} is not allowed on ${path}`
          : `no route ${route}: this server serves GET /v1/models, POST /v1/chat/completions and POST /v1/messages (OpenAI clients: base URL <origin>/v1; Anthropic clients: base URL <origin>)`,
      ),
    );
  }

  private metrics(vllm: VllmModel, res: ServerResponse): void {
    const text = vllm.metrics(this.model);
    if (!res.headersSent && !res.destroyed) {
      res.writeHead(200, {
        'content-type': 'text/plain; version=0.0.4; charset=utf-8',
        'content-length': String(Buffer.byteLength(text)),
      });
      res.end(text);
    }
  }

  private models(res: ServerResponse): void {
    const { model } = this;
    const created = Math.floor(Date.now() / 1000);
    // One body both SDKs read: OpenAI's list (object, owned_by) and Anthropic's page (type, has_more, ...).
    sendJson(res, 200, {
      object: 'list',
      data: [
        {
          id: model,
          object: 'model',
          type: 'model',
          created,
          created_at: new Date(created * 1000).toISOString(),
          owned_by: 'panta',
          display_name: model,
          root: model,
        },
      ],
      has_more: false,
      first_id: model,
      last_id: model,
    });
  }

  private async generate(api: Api, req: IncomingMessage, res: ServerResponse, abort: AbortSignal): Promise<void> {
    const answered = await this.answer(api, req, res);
    if (!answered) return;
    const { request, fault } = answered;
    let { result } = answered;
    const simHeaders: Record<string, string> = {};
    if (this.vllm) {
      const simulated = await this.simulateVllm(this.vllm, api, request, result, res, abort);
      if (!simulated) return;
      result = simulated.result;
      Object.assign(simHeaders, simulated.headers);
    }
    if (this.latency && !(await this.latency.wait(result.completionTokens, abort))) return;
    if (this.extraMs > 0 && !(await delay(this.extraMs, abort))) return;
    const reply = JSON.stringify(api.reply(result, this.model, fault?.kind === 'empty' && fault.variant >= 0.5));
    if (fault?.kind === 'malformed') {
      sendText(res, 200, reply.slice(0, Math.floor(reply.length / 2)));
      return;
    }
    if (fault?.kind === 'empty') {
      sendText(res, 200, fault.variant < 0.5 ? '' : reply);
      return;
    }
    this.stats.completed++;
    this.stats.promptTokens += result.promptTokens;
    this.stats.completionTokens += result.completionTokens;
    sendText(res, 200, reply, simHeaders);
  }

  /**
   * Reads the body, draws a fault, parses the request and answers it; undefined once the reply is sent (a body
   * too large, a fault that replaces the reply, a bad request) or the client went away.
   */
  private async answer(api: Api, req: IncomingMessage, res: ServerResponse): Promise<Answered | undefined> {
    const { stats, maxBody } = this;
    let text: string;
    try {
      text = await readBody(req, maxBody);
    } catch (e) {
      if (e instanceof BodyTooLarge) {
        stats.badRequests++;
        sendJson(res, 413, api.error(413, `request body larger than ${maxBody} bytes`), { connection: 'close' });
      }
      return undefined;
    }
    const fault = this.faults?.next();
    if (fault) {
      stats.faults[fault.kind]++;
      if (failEarly(fault, api, req, res)) return undefined;
    }
    try {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (e) {
        throw new RequestError(400, `body: not valid JSON (${(e as Error).message})`);
      }
      const request = api.parse(body, this.model);
      return { request, result: this.responder.answer(request), fault };
    } catch (e) {
      if (!(e instanceof RequestError)) throw e;
      stats.badRequests++;
      sendJson(res, e.status, api.error(e.status, e.message, e.param));
      return undefined;
    }
  }

  /**
   * The simulated vLLM server's turn: refuses what vLLM refuses (a priority without priority scheduling, a
   * context too long), else waits for the simulated GPU. The reply padded to the tokens it bills, and what the
   * simulated GPU did as headers; undefined once a refusal is sent or the client went away.
   */
  private async simulateVllm(
    vllm: VllmModel,
    api: Api,
    request: GenerationRequest,
    answer: GenerationResult,
    res: ServerResponse,
    abort: AbortSignal,
  ): Promise<{ result: GenerationResult; headers: Record<string, string> } | undefined> {
    const priority = request.priority ?? 0;
    // vLLM's own words for a priority sent to a server without priority scheduling.
    const refusal =
      priority !== 0 && this.policy !== 'priority'
        ? new RequestError(400, `Got priority ${priority} but Priority scheduling is not enabled.`, 'priority')
        : undefined;
    // A real model's reply is as long as the tokens it bills: a short surrogate answer is padded to them, so
    // that the prompts quoting it are as long as a real model's (a mean field of 256 quotes 255 answers).
    const result = { ...answer, text: padToTokens(answer.text, answer.completionTokens) };
    const ids = estimateTokenIds(request.messages.system, request.messages.user);
    const output = Math.max(1, result.completionTokens);
    const maxTokens = Math.max(output, request.maxTokens ?? output);
    const limit = vllm.tooLong(ids.length, maxTokens);
    const error =
      refusal ??
      (limit !== undefined
        ? new RequestError(
            400,
            `This model's maximum context length is ${limit} tokens. However, you requested ${ids.length + maxTokens} tokens (${ids.length} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
            'messages',
          )
        : undefined);
    if (error) {
      this.stats.badRequests++;
      sendJson(res, error.status, api.error(error.status, error.message, error.param));
      return undefined;
    }
    const done = await vllm.run(ids, maxTokens, output, priority, abort);
    if (!done) return undefined;
    // What the simulated GPU did for this request, in simulated seconds (the wall time is this / time scale).
    const headers = {
      'x-panta-sim-latency-s': String(done.finish - done.arrival),
      'x-panta-sim-queue-s': String(done.admitted - done.arrival),
      'x-panta-sim-gpu-s': String(done.gpuSeconds),
      'x-panta-sim-cached-tokens': String(done.cachedTokens),
      'x-panta-sim-prompt-tokens': String(done.promptTokens),
    };
    return { result, headers };
  }
}
