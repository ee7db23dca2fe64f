import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { leaseHolder, tryTakeLease } from './redis/leases.js';
import { releaseLease, renewLease, type PantaRedis } from './redis/scripts.js';

const TTL_MS = 5000;

/**
 * One scheduler and one collector per sweep: two collectors would both write the corpus, two schedulers
 * would each close runs. A role holds a lease it renews; a killed holder's lease expires within seconds, so a
 * restarted role waits that long at most, while a second live one keeps waiting and says so.
 */
export class RoleLease {
  private timer?: NodeJS.Timeout;
  /** What the lease key holds while this process holds it (a scheduler's jobs carry it: see BatchJob.lease). */
  readonly token = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  lost = false;
  /** A renewal in flight: the next tick skips rather than race it (a stalled event loop fires ticks together). */
  private renewing = false;

  private constructor(
    private readonly redis: PantaRedis,
    private readonly key: string,
  ) {}

  static async acquire(redis: PantaRedis, key: string, onWait: (holder: string) => void, signal?: AbortSignal): Promise<RoleLease | null> {
    for (let waited = 0; !signal?.aborted; waited++) {
      const lease = await RoleLease.tryAcquire(redis, key);
      if (lease) return lease;
      if (waited % 10 === 0) onWait((await leaseHolder(redis, key)) ?? 'unknown');
      await sleep(500);
    }
    return null;
  }

  /** The lease if nobody holds it now, without waiting (a collector with `--shard auto` tries each shard's). */
  static async tryAcquire(redis: PantaRedis, key: string): Promise<RoleLease | null> {
    const lease = new RoleLease(redis, key);
    if (!(await tryTakeLease(redis, { key, token: lease.token, ttlMs: TTL_MS }))) return null;
    lease.timer = setInterval(() => {
      void lease.renew().catch(() => undefined);
    }, TTL_MS / 4);
    lease.timer.unref();
    return lease;
  }

  /**
   * Renews; a lease that expired (Redis down, or this process's event loop stalled past the TTL on a loaded
   * machine) is taken again unless another process holds it now. One renewal at a time, and a lease found
   * held by this process's own token is not lost: two renewals that both found it expired would otherwise
   * race, one taking it again and the other calling it lost.
   */
  private async renew(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    try {
      const lease = { key: this.key, token: this.token, ttlMs: TTL_MS };
      if (await renewLease(this.redis, lease)) return;
      if (await tryTakeLease(this.redis, lease)) return;
      if ((await leaseHolder(this.redis, this.key)) !== this.token) this.lost = true;
    } finally {
      this.renewing = false;
    }
  }

  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await releaseLease(this.redis, { key: this.key, token: this.token, ttlMs: TTL_MS }).catch(() => undefined);
  }
}
