import type { Redis } from 'ioredis';
import { INBOX_MAXLEN, type SweepKeys } from '../keys.js';
import {
  decodeCollectorMessage,
  encodeCollectorMessage,
  encodeSchedulerMessage,
  type CollectorMessage,
  type Delivered,
  type SchedulerMessage,
} from './inbox.js';

/** The consumer group through which the collector reads its inbox: a request it had not finished is delivered again. */
const GROUP = 'collector';
const CONSUMER = 'collector';

/** Sends a message to the scheduler's inbox (trimmed: the scheduler reads from its start and trims behind it). */
export async function sendToScheduler(redis: Redis, keys: SweepKeys, message: SchedulerMessage): Promise<void> {
  await redis.xadd(keys.schedulerInbox, 'MAXLEN', '~', INBOX_MAXLEN, '*', ...encodeSchedulerMessage(message));
}

/** Sends a request to the collector's inbox (never trimmed: the collector deletes what it acknowledges). */
export async function sendToCollector(redis: Redis, keys: SweepKeys, message: CollectorMessage): Promise<void> {
  await redis.xadd(keys.collectorInbox, '*', ...encodeCollectorMessage(message));
}

/** Creates the collector's consumer group (and the stream) unless it exists. */
export async function ensureCollectorGroup(redis: Redis, keys: SweepKeys): Promise<void> {
  await redis.xgroup('CREATE', keys.collectorInbox, GROUP, '0', 'MKSTREAM').catch((e: Error) => {
    if (!e.message.includes('BUSYGROUP')) throw e;
  });
}

/**
 * Reads the collector's inbox: `pending` re-reads the entries delivered to it and never acknowledged,
 * otherwise new ones, waiting up to blockMs. Each entry is decoded (a malformed one is an InboxEntryError).
 */
export async function readCollectorInbox(
  blocking: Redis,
  keys: SweepKeys,
  options: { pending: boolean; count: number; blockMs: number },
): Promise<Delivered<CollectorMessage>[]> {
  const reply = (await blocking.xreadgroup(
    'GROUP',
    GROUP,
    CONSUMER,
    'COUNT',
    options.count,
    'BLOCK',
    options.blockMs,
    'STREAMS',
    keys.collectorInbox,
    options.pending ? '0' : '>',
  )) as [string, [string, string[]][]][] | null;
  return (reply?.[0]?.[1] ?? []).map(([id, flat]) => ({ id, message: decodeCollectorMessage(keys.collectorInbox, id, flat) }));
}

/** Acknowledges handled requests and deletes them (the stream holds only what is still to do). */
export async function ackCollectorInbox(redis: Redis, keys: SweepKeys, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await redis
    .multi()
    .xack(keys.collectorInbox, GROUP, ...ids)
    .xdel(keys.collectorInbox, ...ids)
    .exec();
}
