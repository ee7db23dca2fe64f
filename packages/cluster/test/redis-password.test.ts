import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RHEON6, pantaAsync, pantaProcess, tempDir, writeSpec } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';
import { Roles, errorLines, expectVerified } from './roles.js';

const PASSWORD = 'requirepass-Zq81xw';
const dir = tempDir('panta-auth-');
let port: number;
let server: RedisServer;
const roles = new Roles(() => ({}));

/** A redis-server that refuses every client without the password, as the deploy files configure it. */
beforeAll(async () => {
  server = await RedisServer.start(dir, { password: PASSWORD });
  port = server.port;
});
afterAll(async () => {
  roles.killAll();
  await server.stop();
});

describe('a Redis with requirepass', () => {
  it("roles authenticate with the URL's password or $PANTA_REDIS_PASSWORD and never print it; a missing or wrong one is one line, exit 2", {
    timeout: 120_000,
  }, async () => {
    const withUrl = { PANTA_REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${port}` };
    const withEnv = { PANTA_REDIS_URL: `redis://127.0.0.1:${port}`, PANTA_REDIS_PASSWORD: PASSWORD };
    const specFile = writeSpec(
      dir,
      `name: auth\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [16]\ntemperatures: [0.5]\nsweeps: 2\nseed: 3\nbackend: {kind: surrogate, latency_ms: 2}\nconcurrency: 8\n`,
      'auth.yaml',
    );
    const out = join(dir, 'auth');
    const workers = [roles.spawn(['worker', '--concurrency', '4'], withEnv), roles.spawn(['worker', '--concurrency', '4'], withUrl)];
    const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '200'], withEnv);
    const scheduler = roles.spawn(['scheduler', specFile], withUrl);
    const outputs: string[] = [];
    const scheduled = await scheduler.exited;
    outputs.push(scheduled.stdout, scheduled.stderr);
    expect(errorLines(scheduled.stderr)).toEqual([]);
    expect(scheduled.code).toBe(0);
    const collected = await collector.exited;
    outputs.push(collected.stdout, collected.stderr);
    expect(collected.code).toBe(0);
    for (const w of workers) w.kill('SIGTERM');
    for (const w of workers) {
      const done = await w.exited;
      outputs.push(done.stdout, done.stderr);
      expect(done.code).toBe(0);
    }
    await expectVerified(out);

    const status = await pantaAsync(['status', '--redis', withUrl.PANTA_REDIS_URL]);
    outputs.push(status.stdout, status.stderr);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/sweep auth-[0-9a-f]{12} \(done; corpus written\)/);

    // Without the password, or with a wrong one: one line naming the fix, exit 2, the password nowhere.
    const refused = async (args: string[], env: Record<string, string>, problem: RegExp) => {
      const r = await pantaProcess(args, env).exited;
      outputs.push(r.stdout, r.stderr);
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toEqual([expect.stringMatching(problem)]);
      expect(lines[0]).toContain('fix: give the password in the URL, redis://:<password>@host:port, as --redis');
    };
    // Each its own process, run at once.
    await Promise.all([
      refused(
        ['status', '--redis', `redis://127.0.0.1:${port}`],
        {},
        /^panta: redis:\/\/127\.0\.0\.1:\d+: password: Redis requires a password \(NOAUTH\); fix: /,
      ),
      refused(
        ['status', '--redis', `redis://:not-${PASSWORD}@127.0.0.1:${port}`],
        {},
        /^panta: redis:\/\/\[redacted\]@127\.0\.0\.1:\d+: password: Redis refused the password given \(WRONGPASS\); fix: /,
      ),
      refused(
        ['scheduler', specFile, '--redis', `redis://127.0.0.1:${port}`],
        { PANTA_REDIS_PASSWORD: `not-${PASSWORD}` },
        /^panta: redis:\/\/127\.0\.0\.1:\d+: password: Redis refused the password given \(WRONGPASS\); fix: /,
      ),
      refused(['worker', '--redis', `redis://127.0.0.1:${port}`], {}, /Redis requires a password \(NOAUTH\)/),
      refused(['collector', '--redis', `redis://127.0.0.1:${port}`], {}, /Redis requires a password \(NOAUTH\)/),
    ]);
    for (const text of outputs) expect(text).not.toContain(PASSWORD);
  });
});
