import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireOutLock, outLockPath } from '@panta/corpus';
import { tempDir } from '../../../test/helpers.js';

function stat22(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

function writeHolder(out: string, holder: object): void {
  mkdirSync(join(out, '.state'), { recursive: true });
  writeFileSync(outLockPath(out), JSON.stringify(holder));
}

describe('acquireOutLock', () => {
  it('records who holds the folder, refuses a second taker in the same process, and release removes only its own lock', () => {
    const out = join(tempDir('panta-outlock-'), 'corpus');
    const lock = acquireOutLock(out, 'panta run a.yaml');
    expect(JSON.parse(readFileSync(lock.file, 'utf8'))).toEqual({
      ...lock.holder,
      command: 'panta run a.yaml',
      pid: process.pid,
      host: hostname(),
    });
    expect(lock.tookOver).toBeUndefined();
    expect(() => acquireOutLock(out)).toThrow(new RegExp(`another panta process is writing this corpus folder: pid ${process.pid} on `));
    lock.release();
    expect(existsSync(lock.file)).toBe(false);
    const again = acquireOutLock(out);
    lock.release(); // a second release of the old lock leaves the new one alone
    expect(existsSync(again.file)).toBe(true);
    again.release();
    expect(readdirSync(join(out, '.state'))).toEqual([]);
  });

  it('takes over a dead pid, a live pid that started at another time (reused), and this pid from a previous life', () => {
    const out = join(tempDir('panta-outlock-stale-'), 'corpus');
    const cases = [
      { pid: deadPid(), host: hostname(), command: 'dead', since: 'x' },
      { pid: process.ppid, host: hostname(), command: 'reused', since: 'x', started: `${stat22(process.ppid)}1` },
      { pid: process.pid, host: hostname(), command: 'previous life', since: 'x' },
    ];
    for (const holder of cases) {
      writeHolder(out, holder);
      const lock = acquireOutLock(out);
      expect(lock.tookOver, holder.command).toEqual(holder);
      lock.release();
    }
    // The same live parent with its true start time holds the folder.
    writeHolder(out, { pid: process.ppid, host: hostname(), command: 'parent', since: 'x', started: stat22(process.ppid) });
    expect(() => acquireOutLock(out)).toThrow(/pid \d+ on .* \("parent"\), since x; fix: wait for it to finish or stop it/);
  });

  it('of six processes racing for a dead lock, exactly one gets it', async () => {
    const out = join(tempDir('panta-outlock-race-'), 'corpus');
    writeHolder(out, { pid: deadPid(), host: hostname(), command: 'dead', since: 'x' });
    const module = resolve(import.meta.dirname, '..', 'dist', 'out-lock.js');
    expect(existsSync(module), 'build first: npx tsc -b').toBe(true);
    // Each loads the module, says so, and tries once told to go: all at once, not one per start-up time.
    const script = `
      const { acquireOutLock } = await import(${JSON.stringify(module)});
      process.stdout.write('ready\\n');
      process.stdin.once('data', () => {
        let line;
        try { acquireOutLock(${JSON.stringify(out)}); line = 'got'; } catch (e) { line = 'refused ' + e.message; }
        process.stdout.write(line + '\\n');
        if (line === 'got') setInterval(() => {}, 60_000); // the holder holds until the test ends it
        else process.exit(0);
      });
    `;
    const children = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    const lineAfter = (c: (typeof children)[number], skip: number) =>
      new Promise<string>((done) => {
        let text = '';
        c.stdout.on('data', (d: Buffer) => {
          text += d.toString();
          const lines = text.split('\n');
          if (lines.length > skip + 1) done(lines[skip]);
        });
      });
    try {
      const answers = children.map((c) => lineAfter(c, 1));
      await Promise.all(children.map((c) => lineAfter(c, 0)));
      for (const c of children) c.stdin.write('go\n');
      const lines = await Promise.all(answers);
      expect(lines.filter((l) => l === 'got')).toHaveLength(1);
      for (const l of lines.filter((l) => l !== 'got'))
        expect(l).toMatch(/^refused .*another panta process is writing this corpus folder: pid \d+/);
    } finally {
      for (const c of children) c.kill('SIGKILL');
    }
  });
});
