import type { Redis } from 'ioredis';
import { toError } from '@panta/core';
import type { Delivered } from './inbox.js';

/** Decodes one stream entry (throws an InboxEntryError naming the field at fault). */
export type Decoder<M> = (stream: string, id: string, flat: readonly string[]) => M;

/**
 * Reads a stream from the moment it starts (what came before belongs to an earlier incarnation and is
 * recovered from state, not from messages), hands entries over decoded, in batches, and trims what it has read.
 */
export class InboxReader<M> {
  private lastId = '0-0';
  private closed = false;
  private loop: Promise<void> = Promise.resolve();
  private readonly blocking: Redis;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly decode: Decoder<M>,
    private readonly handle: (entries: Delivered<M>[]) => void,
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
      if (!this.closed) onError(toError(e));
    });
  }

  private async run(): Promise<void> {
    let trimmed = Date.now();
    while (!this.closed) {
      const reply = (await this.blocking.xread('COUNT', 2000, 'BLOCK', 1000, 'STREAMS', this.key, this.lastId)) as
        | [string, [string, string[]][]][]
        | null;
      if (this.closed) return;
      const raw = reply?.[0]?.[1] ?? [];
      if (raw.length === 0) continue;
      this.lastId = raw[raw.length - 1][0];
      this.handle(raw.map(([id, flat]) => ({ id, message: this.decode(this.key, id, flat) })));
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
