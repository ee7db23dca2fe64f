import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type PantaRedis } from '../src/index.js';
import { RoleLease } from '../src/role-lease.js';
import { tempDir } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';

let server: RedisServer;
let redis: PantaRedis;
beforeAll(async () => {
  server = await RedisServer.start(tempDir('panta-lease-'));
  redis = connect(server.url, 'test');
});
afterAll(async () => {
  await redis.quit();
  await server.stop();
});

/** The lease's renewal, as its timer calls it. */
const renew = (lease: RoleLease) => (lease as unknown as { renew(): Promise<void> }).renew();

describe('RoleLease', () => {
  it('keeps a lease that expired while its renewals piled up (a stalled event loop): two at once do not call it lost', async () => {
    const key = 'panta:test:lease-race';
    const lease = await RoleLease.tryAcquire(redis, key);
    expect(lease).not.toBeNull();
    if (!lease) return;
    await redis.del(key); // expired: the process did not renew within the TTL
    await Promise.all([renew(lease), renew(lease)]);
    expect(lease.lost).toBe(false);
    expect(await redis.get(key)).toBe(lease.token);
    await lease.release();
  });

  it('is lost when another process took it after it expired', async () => {
    const key = 'panta:test:lease-taken';
    const lease = await RoleLease.tryAcquire(redis, key);
    if (!lease) throw new Error('no lease');
    await redis.set(key, 'another-host:1:abcd', 'PX', 5000);
    await renew(lease);
    expect(lease.lost).toBe(true);
    await lease.release();
  });
});
