import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The deploy files' AOF rewrite thresholds (test/deploy.test.ts checks they agree). */
export const AOF_REWRITE = ['--auto-aof-rewrite-percentage', '100', '--auto-aof-rewrite-min-size', '4gb'];

/**
 * A real redis-server for one test file, configured as production should be: AOF with appendfsync always
 * (nothing acknowledged is lost), noeviction, and the AOF rewritten only past 4gb (as the deploy files say
 * why: a sweep's churn would otherwise rewrite it every few seconds). `restart` kills it (SIGKILL by default) and starts it again
 * on the same port and data folder.
 */
export class RedisServer {
  private child?: ChildProcess;

  private constructor(
    readonly port: number,
    readonly dir: string,
    /** With one, the server refuses every client without it (`--requirepass`), as the deploy files can set it. */
    readonly password?: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(dir: string, { password }: { password?: string } = {}): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), dir, password);
    await server.spawn();
    return server;
  }

  private async spawn(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      ...AOF_REWRITE,
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
      ...(this.password === undefined ? [] : ['--requirepass', this.password]),
    ];
    this.child = spawn('redis-server', args, { stdio: 'ignore' });
    const probe = new Redis(this.url, { password: this.password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      for (let i = 0; i < 200; i++) {
        try {
          await probe.connect();
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          probe.disconnect();
          await sleep(25);
        }
      }
      throw new Error(`redis-server did not start on port ${this.port}`);
    } finally {
      probe.disconnect();
    }
  }

  async restart(signal: NodeJS.Signals = 'SIGKILL', downMs = 500): Promise<void> {
    await this.stop(signal);
    await sleep(downMs);
    await this.spawn();
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}
