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

/**
 * Sends a request to the collector's control inbox (never trimmed: the collector deletes what it acknowledges).
 * Workers' commits go to its other inbox, in the commit step (commit-events-n).
 */
export async function sendToCollector(redis: Redis, keys: SweepKeys, message: CollectorMessage): Promise<void> {
  await redis.xadd(keys.collectorControl, '*', ...encodeCollectorMessage(message));
}

/** Creates the collector's consumer group on both its inboxes (and the streams) unless it exists. */
export async function ensureCollectorGroup(redis: Redis, keys: SweepKeys): Promise<void> {
  for (const stream of [keys.collectorControl, keys.collectorInbox]) {
    await redis.xgroup('CREATE', stream, GROUP, '0', 'MKSTREAM').catch((e: Error) => {
      if (!e.message.includes('BUSYGROUP')) throw e;
    });
  }
}

/** What one read of the collector's inboxes brought: its control requests, and the workers' commits. */
export interface CollectorRead {
  control: Delivered<CollectorMessage>[];
  commits: Delivered<CollectorMessage>[];
}

/**
 * Reads the collector's inboxes: `pending` re-reads the entries delivered to it and never acknowledged,
 * otherwise new ones, waiting up to blockMs; `controlOnly` reads only the control requests (the wait between
 * two reads of commits, cut short by a request). Each entry is decoded (a malformed one is an InboxEntryError);
 * any message is understood from either inbox, so a worker of the release before keeps working.
 */
export async function readCollectorInbox(
  blocking: Redis,
  keys: SweepKeys,
  options: { pending: boolean; count: number; blockMs: number; controlOnly?: boolean },
): Promise<CollectorRead> {
  const streams = options.controlOnly ? [keys.collectorControl] : [keys.collectorControl, keys.collectorInbox];
  const from = options.pending ? '0' : '>';
  const reply = (await blocking.xreadgroup(
    'GROUP',
    GROUP,
    CONSUMER,
    'COUNT',
    options.count,
    'BLOCK',
    Math.max(1, Math.round(options.blockMs)),
    'STREAMS',
    ...streams,
    ...streams.map(() => from),
  )) as [string, [string, string[]][]][] | null;
  const read: CollectorRead = { control: [], commits: [] };
  for (const [stream, entries] of reply ?? []) {
    const into = stream === keys.collectorControl ? read.control : read.commits;
    for (const [id, flat] of entries) into.push({ id, message: decodeCollectorMessage(stream, id, flat) });
  }
  return read;
}

/** Acknowledges handled entries of both inboxes and deletes them (the streams hold only what is still to do). */
export async function ackCollectorInbox(
  redis: Redis,
  keys: SweepKeys,
  ids: { control: readonly string[]; commits: readonly string[] },
): Promise<void> {
  if (ids.control.length === 0 && ids.commits.length === 0) return;
  const m = redis.multi();
  if (ids.control.length > 0) m.xack(keys.collectorControl, GROUP, ...ids.control).xdel(keys.collectorControl, ...ids.control);
  if (ids.commits.length > 0) m.xack(keys.collectorInbox, GROUP, ...ids.commits).xdel(keys.collectorInbox, ...ids.commits);
  await m.exec();
}
