// What the cluster benches share: the `panta` CLI as child processes, free ports, and the CPU a role reports
// in its own log lines.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const root = resolve(import.meta.dirname, '../..');
export const cli = join(root, 'packages/cli/bin/panta.js');

export const freePort = () =>
  new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

/** Every process started here, for a bench to end those still running when it is interrupted. */
export const started = new Set();

/**
 * glibc's malloc as the deploy files set it for every role (deploy/Dockerfile, deploy/slurm): the benches
 * measure the processes a cluster runs. `PANTA_BENCH_MALLOC=default` measures glibc's own thresholds instead.
 */
const DEPLOY_MALLOC = 'glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456';
const malloc = process.env.PANTA_BENCH_MALLOC === 'default' ? {} : { GLIBC_TUNABLES: process.env.GLIBC_TUNABLES ?? DEPLOY_MALLOC };

/** A `panta` process; `exited` resolves with its exit code and everything it printed (stdout and stderr). */
export function proc(args, env = {}) {
  const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...malloc, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((ok) => child.once('close', (code) => ok({ code, out })));
  return { child, exited };
}

/** CPU a role spent between two of its log lines (its start-up, module loading included, left out). */
export function busyMs(out, from, to) {
  const at = (msg) => JSON.parse(out.split('\n').find((l) => l.includes(`"msg":"${msg}`)) ?? '{"cpu_ms":0}').cpu_ms ?? 0;
  return at(to) - at(from);
}

/** The first log line of `out` whose msg starts with `msg`, parsed ({} if none). */
export function logLine(out, msg) {
  return JSON.parse(out.split('\n').find((l) => l.includes(`"msg":"${msg}`)) ?? '{}');
}
