import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { PantaScripts } from './scripts/index.js';

const TTL_MS = 5000;

/**
 * One scheduler and one collector per sweep: two collectors would both write the corpus, two schedulers
 * would each close runs. A role holds a lease it renews; a killed holder's lease expires within seconds, so a
 * restarted role waits that long at most, while a second live one keeps waiting and says so.
 */
export class RoleLease {
  private timer?: NodeJS.Timeout;
  private readonly token = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  lost = false;

  private constructor(
    private readonly redis: Redis & PantaScripts,
    private readonly key: string,
  ) {}

  static async acquire(redis: Redis & PantaScripts, key: string, onWait: (holder: string) => void, signal?: AbortSignal): Promise<RoleLease | null> {
    const lease = new RoleLease(redis, key);
    for (let waited = 0; !signal?.aborted; waited++) {
      if ((await redis.set(key, lease.token, 'PX', TTL_MS, 'NX')) === 'OK') {
        lease.timer = setInterval(() => {
          void lease.renew().catch(() => undefined);
        }, TTL_MS / 4);
        lease.timer.unref();
        return lease;
      }
      if (waited % 10 === 0) onWait((await redis.get(key)) ?? 'unknown');
      await sleep(500);
    }
    return null;
  }

  /** Renews; a lease that expired while Redis was down is taken again unless another process holds it now. */
  private async renew(): Promise<void> {
    if ((await this.redis.lease(this.key, this.token, 'renew', TTL_MS)) === 1) return;
    if ((await this.redis.set(this.key, this.token, 'PX', TTL_MS, 'NX')) !== 'OK') this.lost = true;
  }

  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.redis.lease(this.key, this.token, 'release', TTL_MS).catch(() => undefined);
  }
}
