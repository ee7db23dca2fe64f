import type { Redis } from 'ioredis';
import { streamEntries } from './redis.js';

export type InboxEntry = { id: string; fields: Record<string, string> };

/**
 * Reads a stream from the moment it starts (what came before belongs to an earlier incarnation and is
 * recovered from state, not from messages), hands entries over in batches, and trims what it has read.
 */
export class InboxReader {
  private lastId = '0-0';
  private closed = false;
  private loop: Promise<void> = Promise.resolve();
  private readonly blocking: Redis;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly handle: (entries: InboxEntry[]) => void,
  ) {
    this.blocking = redis.duplicate();
    this.blocking.on('error', () => undefined);
  }

  /** Marks where this reader starts; call before anything that may cause messages is sent. */
  async init(): Promise<void> {
    const last = (await this.redis.xrevrange(this.key, '+', '-', 'COUNT', 1)) as [string, string[]][];
    this.lastId = last[0]?.[0] ?? '0-0';
    if (last.length > 0) await this.redis.xtrim(this.key, 'MINID', this.lastId);
  }

  start(onError: (e: Error) => void): void {
    this.loop = this.run().catch((e: unknown) => {
      if (!this.closed) onError(e instanceof Error ? e : new Error(String(e)));
    });
  }

  private async run(): Promise<void> {
    let trimmed = Date.now();
    while (!this.closed) {
      const reply = (await this.blocking.xread('COUNT', 2000, 'BLOCK', 1000, 'STREAMS', this.key, this.lastId)) as [string, [string, string[]][]][] | null;
      if (this.closed) return;
      const entries = streamEntries(reply?.[0]?.[1]);
      if (entries.length === 0) continue;
      this.lastId = entries[entries.length - 1]!.id;
      this.handle(entries);
      if (Date.now() - trimmed > 1000) {
        trimmed = Date.now();
        await this.redis.xtrim(this.key, 'MINID', '~', this.lastId);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.blocking.disconnect();
    await this.loop;
  }
}
