import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RHEON6 } from './helpers.js';

/**
 * An OpenAI-compatible test server shaped like one vLLM engine whose KV cache is the limit: a request holds
 * its prompt's tokens (characters / 4) of `capacityTokens` while it runs, requests that do not fit wait in a
 * FCFS queue (as vLLM's waiting queue), and each runs for `msPerToken` per prompt token whatever else runs.
 * It serves vLLM's `/metrics` names (num_requests_waiting, num_requests_running, kv_cache_usage_perc), counts
 * the requests it got per body (a hash: a request sent twice shows up as a count of 2) and the requests
 * their client abandoned (closed before the reply).
 */
/**
 * The KV-limited tests' workload, embedded and distributed: prompts of `promptTokens` tokens served at `msPerToken`, to
 * a server whose cache holds ~8 of them (`kvLimitedServer`), and a sweep (`kvLimitedSpec`) of 32 mean-field chains of
 * 6 agents, one sweep, all sent at once, with vLLM's priority and a timeout of three service times.
 */
export const KV_LIMITED = {
  promptTokens: Number(process.env.KV_PROMPT_TOKENS ?? 215),
  msPerToken: Number(process.env.KV_MS_PER_TOKEN ?? 1.2),
};

export function kvLimitedServer(): Promise<KvServer> {
  return startKvServer({ capacityTokens: Math.round(8.5 * KV_LIMITED.promptTokens), msPerToken: KV_LIMITED.msPerToken });
}

export function kvLimitedSpec(name: string, url: string, { trials = 32, sweeps = 1 } = {}): string {
  const serviceMs = KV_LIMITED.promptTokens * KV_LIMITED.msPerToken;
  return `name: ${name}
dataset: ${RHEON6}
prompts: [fq117]
geometries: [meanfield]
sizes: [6]
temperatures: [0.7]
trials: ${trials}
sweeps: ${sweeps}
seed: 3
concurrency: 32
backend: {kind: openai, base_url: "${url}/v1", model: kv-model, server: vllm, priority: true, timeout_ms: ${3 * serviceMs}, max_retries: 4}
`;
}

export interface KvServer {
  url: string;
  /** Requests received, per body hash. */
  bodies: Map<string, number>;
  stats(): { requests: number; abandoned: number; maxRunning: number; maxWaiting: number; promptTokens: number[]; priorities: unknown[] };
  close(): Promise<void>;
}

interface Job {
  tokens: number;
  res: ServerResponse;
  seed: number;
  gone: boolean;
}

export async function startKvServer(options: { capacityTokens: number; msPerToken: number; metrics?: boolean }): Promise<KvServer> {
  const { capacityTokens, msPerToken } = options;
  const queue: Job[] = [];
  const running = new Set<Job>();
  let used = 0;
  let requests = 0;
  let abandoned = 0;
  let maxRunning = 0;
  let maxWaiting = 0;
  const promptTokens: number[] = [];
  /** Each request's vLLM `priority` field (undefined where it sent none). */
  const priorities: unknown[] = [];
  const bodies = new Map<string, number>();

  const admit = (): void => {
    while (queue.length > 0 && (running.size === 0 || used + queue[0].tokens <= capacityTokens)) {
      const job = queue.shift()!;
      if (job.gone) continue;
      running.add(job);
      used += job.tokens;
      maxRunning = Math.max(maxRunning, running.size);
      setTimeout(() => finish(job), job.tokens * msPerToken);
    }
  };
  const finish = (job: Job): void => {
    if (!running.delete(job)) return;
    used -= job.tokens;
    if (!job.gone) {
      const words = ['Paris', 'Lyon', 'Nice', 'Lille'];
      const content = `Answer: ${words[job.seed % 4]}. I weighed what my neighbours said and kept to what the question asks.`;
      job.res.setHeader('content-type', 'application/json');
      job.res.end(
        JSON.stringify({
          id: `kv-${job.seed}`,
          object: 'chat.completion',
          created: 0,
          model: 'kv-model',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: job.tokens, completion_tokens: 20, total_tokens: job.tokens + 20 },
        }),
      );
    }
    admit();
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method === 'GET' && req.url === '/metrics' && options.metrics !== false) {
      res.setHeader('content-type', 'text/plain; version=0.0.4');
      res.end(
        [
          '# TYPE vllm:num_requests_running gauge',
          `vllm:num_requests_running{engine="0",model_name="kv-model"} ${running.size}`,
          '# TYPE vllm:num_requests_waiting gauge',
          `vllm:num_requests_waiting{engine="0",model_name="kv-model"} ${queue.filter((j) => !j.gone).length}`,
          '# TYPE vllm:kv_cache_usage_perc gauge',
          `vllm:kv_cache_usage_perc{engine="0",model_name="kv-model"} ${used / capacityTokens}`,
          '',
        ].join('\n'),
      );
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.statusCode = 404;
      res.end('not found');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const hash = createHash('sha256').update(raw).digest('hex');
      bodies.set(hash, (bodies.get(hash) ?? 0) + 1);
      requests++;
      const body = JSON.parse(raw.toString('utf8')) as { messages: { content: string }[]; seed?: number; priority?: unknown };
      priorities.push(body.priority);
      const chars = body.messages.reduce((s, m) => s + m.content.length, 0);
      const job: Job = { tokens: Math.ceil(chars / 4), res, seed: body.seed ?? 0, gone: false };
      promptTokens.push(job.tokens);
      res.on('close', () => {
        if (res.writableFinished) return;
        job.gone = true;
        abandoned++;
        // vLLM aborts a request whose client went away: it leaves the queue, or frees its KV blocks.
        if (running.delete(job)) {
          used -= job.tokens;
          admit();
        }
      });
      queue.push(job);
      maxWaiting = Math.max(maxWaiting, queue.filter((j) => !j.gone).length);
      admit();
    });
  };

  const server = createServer(onRequest);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    stats: () => ({ requests, abandoned, maxRunning, maxWaiting, promptTokens: [...promptTokens], priorities: [...priorities] }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
