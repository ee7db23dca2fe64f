// Named exports only (Biome's noReExportAll): what the CLI, the cluster's tests and a programmatic user need.
export { EVENT_QUEUE, SWEEPS_KEY, sweepIdOf, sweepKeys, type SweepKeys } from './keys.js';
export { UNREACHABLE_REPEAT_MS, connect, redisUrl, shownUrl } from './redis.js';
export { toPayload, type SweepPayload } from './payload.js';
export { BullTransport } from './bull-transport.js';
export { runScheduler, type SchedulerOptions, type SchedulerSummary } from './scheduler.js';
export { runWorker, type WorkerOptions, type WorkerProgress, type WorkerSummary } from './worker.js';
export { runCollector, type CollectorOptions } from './collector-role.js';
export { StatusReader, readStatus, type ClusterStatus, type RunStatus, type SweepStatus } from './status.js';
export { WORKERS_KEY, liveSlots } from './worker-registry.js';
export { SweepStore } from './redis/sweep-store.js';
export { InboxEntryError, type CollectorMessage, type SchedulerMessage } from './redis/inbox.js';
export { ScriptReplyError, type PantaRedis } from './redis/scripts.js';
export { RESULT_FORMAT, ResultFormatError } from './result-codec.js';
