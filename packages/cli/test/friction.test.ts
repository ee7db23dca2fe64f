import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, truncateSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { RHEON6, ROOT, pantaAsync, pantaInProcess, pantaProcess, tempDir, writeSpec, type PantaProcess } from '../../../test/helpers.js';

// What a newcomer meets on a first sweep: npm's own warnings, the summary, paths, a resume and its repairs.

const started: PantaProcess[] = [];
afterAll(() => {
  for (const p of started) p.kill('SIGKILL');
});

/** Two runs of 16 agents x 11 sweeps at 50 ms a call, two in flight: about 9 s, long enough to interrupt. */
const SPEC = `
name: friction
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [16]
temperatures: [0.5, 1.0]
trials: 1
sweeps: 10
seed: 11
backend: {kind: surrogate, latency_ms: 50}
encoders: [{name: h64, kind: hashing, dim: 64}]
max_tokens: 40
concurrency: 2
`;

describe('npm', () => {
  it("runs `npx panta` without a warning (no unknown project config), and onnxruntime-node's CUDA download stays off", () => {
    const r = spawnSync('npx', ['--no-install', 'panta', '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/npm warn/i);
    expect(r.stdout).toMatch(/^Usage: panta/);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    expect(pkg.allowScripts?.['onnxruntime-node']).toBe(false);
  });
});

/** The pids of every live descendant of `pid` (from /proc; a zombie counts as gone). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') parents.set(Number(name), Number(ppid));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parents) {
      if (parent !== p) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

describe('a role started with `npx panta worker &`', () => {
  it("stops when npm's process is killed (npm's shell would leave it serving under PID 1), and prints its lines prefixed with its role", {
    timeout: 60_000,
  }, async () => {
    // A closed port: the worker waits for Redis, holding no work.
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const npm = spawn('npx', ['--no-install', 'panta', 'worker', '--redis', `redis://127.0.0.1:${port}`], {
      cwd: ROOT,
      env: { ...process.env, PANTA_LOG_FORMAT: 'text' },
    });
    let stderr = '';
    npm.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let worker: number[] = [];
    try {
      for (let i = 0; i < 300 && !stderr.includes('is unreachable'); i++) await sleep(100);
      expect(stderr).toMatch(
        new RegExp(`^worker \\d+ \\d\\d:\\d\\d:\\d\\d WARN Redis at redis://127\\.0\\.0\\.1:${port} is unreachable .* down_s=0$`, 'm'),
      );
      worker = descendants(npm.pid!).filter((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('worker'));
      expect(worker.length).toBeGreaterThan(0);
      npm.kill('SIGTERM');
      for (let i = 0; i < 100 && worker.some(alive); i++) await sleep(100);
      expect(worker.filter(alive), stderr).toEqual([]);
      expect(stderr).toMatch(/panta worker: its parent process \(pid \d+, started through npm\) is gone: stopping gracefully/);
    } finally {
      for (const p of worker) if (alive(p)) process.kill(p, 'SIGKILL');
      npm.kill('SIGKILL');
    }
  });
});

describe('panta run, interrupted and resumed with a damaged part', () => {
  const dir = tempDir('panta-friction-');
  const out = join(dir, 'corpus');

  it('says where the corpus goes as an absolute path, the encoder by name, and what a resume found and repaired', async () => {
    writeSpec(dir, SPEC);
    // Relative paths on the command line, from the spec's folder: everything printed is absolute.
    const first = pantaProcess(['run', 'spec.yaml', '--out', 'corpus'], {}, dir);
    started.push(first);
    const status = join(out, '.state', 'status.json');
    for (let i = 0; i < 600; i++) {
      if (existsSync(status) && (JSON.parse(readFileSync(status, 'utf8')) as { eventsWritten: number }).eventsWritten >= 40) break;
      await sleep(100);
    }
    first.kill('SIGINT');
    const stopped = await first.exited;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain(`panta: 2 runs, 352 events -> ${out}\n`);
    expect(stopped.stderr).toContain(`panta: stopped; written events are saved in ${out}: run the same command to resume\n`);

    // What is on disk, and one part cut in half (a disk that lost its tail).
    const shards = readdirSync(join(out, 'events')).filter((n) => n.endsWith('.parquet'));
    const partial = readdirSync(join(out, 'events', '.parts')).filter((r) => readdirSync(join(out, 'events', '.parts', r)).length > 0);
    expect(partial.length).toBeGreaterThan(0);
    const runDir = join(out, 'events', '.parts', partial[0]);
    const damaged = join(runDir, readdirSync(runDir).sort().at(-1)!);
    truncateSync(damaged, Math.floor(statSync(damaged).size / 2));

    const resumed = await pantaAsync(['run', 'spec.yaml', '--out', 'corpus'], dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    const lines = resumed.stderr.split('\n');
    expect(lines[0]).toBe(`panta: 2 runs, 352 events -> ${out}`);
    expect(lines[1]).toBe(
      `panta: resuming ${2 - shards.length} of 2 runs (${shards.length} complete on disk, ${partial.length} partly written)`,
    );
    expect(resumed.stderr).toContain(
      `panta: run ${partial[0]}: discarded 1 damaged file (${damaged}); the run continues after its last good part\n`,
    );
    expect(resumed.stdout).toContain('final sweep, mean over trials (encoder: h64):');
    expect(resumed.stdout).toMatch(new RegExp(`complete: 2/2 runs, 352 events in [\\d.]+ s; corpus: ${out}\\n$`));

    // The progress lines: no rate or ETA before there is signal; tokens are those generated (at most
    // max_tokens a call), not prompt and completion together.
    const progress = lines.filter((l) => l.startsWith('events '));
    expect(progress[0]).toMatch(/\| -- ev\/s \|.*\| ETA --$/);
    for (const l of progress) {
      const m = /calls in flight \d+, ([\d,-]+)\/s \| ([\d,-]+) tok\/s/.exec(l)!;
      if (m[1] === '--' || m[2] === '--') continue;
      expect(Number(m[2].replaceAll(',', '')), l).toBeLessThanOrEqual(40 * Number(m[1].replaceAll(',', '')) * 1.5 + 1);
    }

    const log = readFileSync(join(out, 'log.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const startedEntries = log.filter((e) => e.msg === 'sweep started');
    expect(startedEntries.at(-1)).toMatchObject({ resumed: true, runsComplete: shards.length, runsPartial: partial.length });
    expect(log.find((e) => e.msg === 'discarded damaged files of a run: it resumes after its last good part')).toMatchObject({
      run: partial[0],
      discarded: [damaged],
    });
    expect((await pantaInProcess(['verify', out])).code).toBe(0);
  }, 180_000);
});
