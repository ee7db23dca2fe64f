// A scratch redis-server for the cluster benches, set up as the deploy files set it up (AOF, appendfsync
// always, no RDB snapshots, no eviction), and the counters Redis keeps about itself.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './panta.mjs';

export async function startRedis(dir) {
  const port = await freePort();
  const server = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--auto-aof-rewrite-percentage',
      '100',
      '--auto-aof-rewrite-min-size',
      '4gb',
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  redis.on('error', () => undefined); // until redis-server listens
  for (let i = 0; i < 100 && (await redis.ping().catch(() => '')) !== 'PONG'; i++) await sleep(50);

  /** Seconds of CPU the server itself has used (INFO cpu, user + sys; forked children apart). */
  const cpuNow = async () => {
    const i = await redis.info('cpu');
    return Number(i.match(/used_cpu_user:([\d.]+)/)[1]) + Number(i.match(/used_cpu_sys:([\d.]+)/)[1]);
  };
  /** Redis's own counters: commands run (those inside Lua scripts counted too), EVALSHAs, XREADGROUPs, bytes received. */
  const counts = async () => {
    const stats = await redis.info('commandstats');
    const calls = (name) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    const commands = [...stats.matchAll(/:calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
    const input = Number(/total_net_input_bytes:(\d+)/.exec(await redis.info('stats'))[1]);
    // AOF rewrites run in forked children, whose CPU INFO counts apart from the server's own.
    const cpuInfo = await redis.info('cpu');
    const children = Number(/used_cpu_user_children:([\d.]+)/.exec(cpuInfo)[1]) + Number(/used_cpu_sys_children:([\d.]+)/.exec(cpuInfo)[1]);
    const persistence = await redis.info('persistence');
    const rewrites = Number(/aof_rewrites:(\d+)/.exec(persistence)[1]);
    // What the AOF grew by (a rewrite shrinks it: then this undercounts, and the rewrites say so).
    const aof = Number(/aof_current_size:(\d+)/.exec(persistence)[1]);
    return {
      commands,
      evals: calls('evalsha') + calls('eval'),
      reads: calls('xreadgroup'),
      input,
      rewrites,
      childrenMs: children * 1000,
      aof,
    };
  };
  const stop = () => {
    redis.disconnect();
    server.kill('SIGTERM');
  };
  return { url, redis, server, cpuNow, counts, stop };
}
