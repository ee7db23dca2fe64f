import { InputError, type BackendSpec, type RunPlan } from '@panta/core';
import { openEncoders, workerServices, type WorkerServices } from '@panta/engine';
import { createJudge } from '@panta/judge';
import { createBackend, endpointsOf, waitForEndpoints } from '@panta/llm';
import type { Logger } from '@panta/engine';
import { fromPayload } from './payload.js';
import type { Redis } from 'ioredis';
import { collectorShards } from './collector-shards.js';
import { sweepKeys, type SweepKeys } from './keys.js';
import { SweepStore } from './redis/sweep-store.js';
import { RedisVerdicts } from './redis/verdicts.js';

/** What a worker holds for one sweep: its runs, backend and encoders, built once from the published sweep. */
export interface WorkerContext {
  sweepId: string;
  keys: SweepKeys;
  runs: Map<string, RunPlan>;
  /** The collector shard that writes each run (its commits go to that shard's inbox). */
  shardOf: Map<string, number>;
  services: WorkerServices;
  /**
   * Adaptive temperatures: reads the published grids again (runs and shardOf grow to a later round's), when a
   * job names a run this context does not know.
   */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export interface ContextOptions {
  /** Replaces the spec backend's endpoint (a node-local vLLM, a compose service name). */
  /** Several: the worker balances over them (least in flight), as over a spec's list. */
  baseUrl?: string | readonly string[];
  onRetry?(event: object): void;
  /** How long to wait for the model's endpoints to answer before taking a sweep's events (0: not at all). */
  waitEndpointMs?: number;
  log?: Logger;
  signal?: AbortSignal;
}

/** Long enough for vLLM to load a large model from a cold cache (minutes), short enough to report a dead one. */
export const DEFAULT_WAIT_ENDPOINT_MS = 600_000;

/**
 * The spec's backend with the worker's endpoints instead of its own (the surrogate in process has none). An
 * Anthropic backend takes one endpoint: a list for it is refused in one line.
 */
export function withBaseUrl(backend: BackendSpec, baseUrl: string | readonly string[] | undefined): BackendSpec {
  if (baseUrl === undefined || backend.kind === 'surrogate') return backend;
  const urls = typeof baseUrl === 'string' ? [baseUrl] : [...baseUrl];
  if (urls.length === 0) return backend;
  if (backend.kind === 'anthropic') {
    if (urls.length > 1)
      throw new InputError('--base-url', '', `${urls.length} endpoints for an Anthropic backend, which takes one`, 'give one URL');
    return { ...backend, base_url: urls[0] };
  }
  return { ...backend, base_url: urls.length === 1 ? urls[0] : urls };
}

export async function loadContext(redis: Redis, sweepId: string, options: ContextOptions): Promise<WorkerContext> {
  const keys = sweepKeys(sweepId);
  const payload = await new SweepStore(redis, keys).payload();
  if (!payload) throw new Error(`sweep ${sweepId} is not published in Redis (${keys.spec} is missing)`);
  const sweep = fromPayload(payload);
  const backendSpec = withBaseUrl(sweep.spec.backend, options.baseUrl);
  // A model still loading (vLLM takes minutes) would fail every event after its retries, and its run with it.
  const endpoints = endpointsOf(backendSpec, sweep.specFile);
  if (sweep.spec.early_stopping && sweep.spec.judge.kind === 'llm')
    endpoints.push(...endpointsOf(sweep.spec.judge.backend, sweep.specFile));
  const waitMs = options.waitEndpointMs ?? DEFAULT_WAIT_ENDPOINT_MS;
  if (endpoints.length > 0 && waitMs > 0) {
    await waitForEndpoints(endpoints, {
      timeoutMs: waitMs,
      signal: options.signal,
      onWait: (w) =>
        options.log?.info(
          { sweep: sweepId, endpoint: w.endpoint, waited_s: w.waitedS, limit_s: w.limitS, last: w.last },
          'waiting for the model endpoint to answer before running events',
        ),
    });
    // Stopping while the model loads: the jobs go back to the queue instead of failing their events.
    if (options.signal?.aborted) throw new Error('the worker is stopping before its model endpoint answered');
  }
  const backend = createBackend(backendSpec, sweep.prompts, sweep.specFile, { onRetry: options.onRetry });
  const encoders = await openEncoders(sweep.spec.encoders, sweep.specFile);
  // Sweep boundaries with early stopping judge the snapshot here (the collector judges the rows it writes).
  // The judge keeps the spec's endpoint: --base-url names the agents' model, which may not be the judge's.
  const judge = createJudge(sweep.spec.judge, sweep.specFile, sweep.prompts, undefined, {
    shared: new RedisVerdicts(redis, keys.verdicts),
  });
  const runs = new Map(sweep.runs.map((r) => [r.runId, r]));
  const shardOf = collectorShards(sweep.runs, payload.collectors ?? 1, sweep.spec);
  return {
    sweepId,
    keys,
    runs,
    shardOf,
    services: workerServices(sweep, { backend, encoders, judge }),
    refresh: async () => {
      const now = await new SweepStore(redis, keys).payload();
      if (!now?.grids) return;
      const later = fromPayload(now);
      for (const r of later.runs) runs.set(r.runId, r);
      for (const [run, shard] of collectorShards(later.runs, now.collectors ?? 1, later.spec)) shardOf.set(run, shard);
    },
    close: async () => {
      await backend.close();
      await judge.close();
      for (const e of encoders) await e.close();
    },
  };
}
