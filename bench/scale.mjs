// bench/scale: how time and memory grow with the population. Each case is one `panta run` of the built
// binary in a child process of its own (surrogate backend, hashing encoder of 384, reference judge,
// concurrency 256, 10 sweeps), so its peak RSS is that process's alone: from the kernel (/usr/bin/time's
// maximum resident set size, i.e. getrusage) where /usr/bin/time exists, else the highest VmHWM read from
// /proc/<pid>/status every 250 ms. Prints one row per case, measured in this one run; it asserts nothing.
// A case that dies (out of memory, killed, over --timeout) is a row saying so, not the end of the bench.
// Run after a build (npx tsc -b): npm run bench:scale [-- --only ring-1e4,ring-1e5] [--timeout 1200] [--verify] [--keep]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { benchArgs, list, num, oneOf } from './lib/args.mjs';

const root = resolve(import.meta.dirname, '..');
const cli = join(root, 'packages/cli/bin/panta.js');
const dataset = join(root, 'datasets/rheon6.jsonl');

/** Every case, smallest first within a family: growth is read against the row before it in its family. */
const CASES = [
  { name: 'ring-1e4', family: 'ring', geometry: 'ring', n: 10_000 },
  { name: 'ring-1e5', family: 'ring', geometry: 'ring', n: 100_000 },
  { name: 'ring-1e6', family: 'ring', geometry: 'ring', n: 1_000_000 },
  { name: 'torus2d-1e6', family: 'torus2d', geometry: 'torus2d', n: 1_000_000, label: '1000 x 1000 torus2d' },
  { name: 'torus3d-1e6', family: 'torus3d', geometry: 'torus3d', n: 1_000_000, label: '100^3 torus3d' },
  { name: 'meanfield-s8-1e6', family: 'meanfield', geometry: '{kind: meanfield, sample: 8}', n: 1_000_000, label: 'meanfield sample 8' },
];

const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  only: { help: 'the cases to run, comma-separated (default those up to 10^5 agents)', value: list(oneOf(CASES.map((c) => c.name))) },
  timeout: { help: 'seconds a case may run before it is a row saying so', value: num(0), default: 1800 },
  verify: { help: '`panta verify` each corpus' },
  keep: { help: 'keep the corpora' },
});
const { only, verify, keep } = flags;
const timeoutS = flags.timeout;
const cases = only ? CASES.filter((c) => only.includes(c.name)) : CASES.filter((c) => c.n <= 100_000);
if (!only) console.log('(the cases of 10^6 agents take minutes each: run them with --only, e.g. --only ring-1e6)\n');

const gnuTime = existsSync('/usr/bin/time') && spawnSync('/usr/bin/time', ['-f', '%M', 'true']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'panta-bench-scale-'));

function specOf(c) {
  return `name: scale-${c.name}
dataset: ${dataset}
prompts: [fq117]
geometries: [${c.geometry}]
sizes: [${c.n}]
temperatures: [0.7]
sweeps: 10
seed: 1
backend: {kind: surrogate}
encoders: [{name: hashing, kind: hashing, dim: 384}]
judge: {kind: reference}
concurrency: 256
`;
}

/** Bytes of every file under `path`. */
function sizeOf(path) {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((sum, f) => sum + sizeOf(join(path, f)), 0);
}

/** The highest VmHWM (peak RSS) of `pid` and of the processes under it, in bytes (0 once gone). */
function vmHwm(pid) {
  let most = 0;
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (kb) most = Number(kb[1]) * 1024;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean))
        most = Math.max(most, vmHwm(Number(child)));
    }
  } catch {
    // the process has exited between two reads
  }
  return most;
}

/** Runs one case: { result, events, wallS, peakRss, corpusBytes, verified }. */
async function runCase(c) {
  const spec = join(dir, `${c.name}.yaml`);
  const out = join(dir, c.name);
  writeFileSync(spec, specOf(c));
  const args = [cli, 'run', spec, '--out', out, '--log-level', 'warn'];
  const [cmd, argv] = gnuTime ? ['/usr/bin/time', ['-f', 'PANTA_BENCH_MAXRSS_KB %M', process.execPath, ...args]] : [process.execPath, args];
  const t0 = performance.now();
  // Its own process group: a timeout kills the whole of it (time and node).
  const child = spawn(cmd, argv, { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderrTail = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => {
    stderrTail = (stderrTail + d).slice(-20_000);
    const line = String(d).trim().split('\n').at(-1);
    if (line?.startsWith('events ')) process.stderr.write(`\r\x1b[K  ${c.name}: ${line.slice(0, 150)}`);
  });
  let sampled = 0;
  const sampler = setInterval(() => (sampled = Math.max(sampled, vmHwm(child.pid))), 250);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, timeoutS * 1000);
  const { code, signal } = await new Promise((ok) => child.once('close', (code, signal) => ok({ code, signal })));
  const wallS = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  clearTimeout(timer);
  process.stderr.write('\r\x1b[K');
  const fromTime = /PANTA_BENCH_MAXRSS_KB (\d+)/.exec(stderrTail);
  const peakRss = fromTime ? Number(fromTime[1]) * 1024 : sampled;
  const killed = /Command terminated by signal (\d+)/.exec(stderrTail);
  const done = /(\w+): \d+\/\d+ runs, ([\d,]+) events in/.exec(stdout);
  let result;
  if (timedOut) result = `timeout (${timeoutS} s)`;
  else if (/heap out of memory|ENOMEM|Cannot allocate memory/.test(stderrTail)) result = 'out of memory';
  else if (killed || signal)
    result = `killed (signal ${killed?.[1] ?? signal}${(killed?.[1] ?? '') === '9' || signal === 'SIGKILL' ? ', likely the OOM killer' : ''})`;
  else if (code !== 0)
    result = `exit ${code}: ${
      stderrTail
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('PANTA_BENCH'))
        .at(-1) ?? ''
    }`.slice(0, 160);
  else result = done?.[1] ?? 'ok';
  const events = done ? Number(done[2].replaceAll(',', '')) : undefined;
  const corpusBytes = sizeOf(out);
  let verified;
  if (verify && code === 0)
    verified = spawnSync(process.execPath, [cli, 'verify', out], { stdio: 'ignore' }).status === 0 ? 'verified' : 'VERIFY FAILED';
  if (!keep) rmSync(out, { recursive: true, force: true });
  return { result: verified ? `${result}, ${verified}` : result, events, wallS, peakRss, corpusBytes };
}

const mib = (b) => (b / 2 ** 20).toLocaleString('en-US', { maximumFractionDigits: 0 });
const int = (x) => Math.round(x).toLocaleString('en-US');
console.log(
  `panta run, one process per case: surrogate, hashing 384, reference judge, concurrency 256, 10 sweeps; timeout ${timeoutS} s a case`,
);
console.log(
  `peak RSS from ${gnuTime ? "the kernel (/usr/bin/time's maximum resident set size)" : '/proc/<pid>/status VmHWM read every 250 ms'}; this machine: ${(totalmem() / 2 ** 30).toFixed(1)} GiB\n`,
);
const header = [
  'case',
  'N',
  'events',
  'wall s',
  'events/s',
  'peak RSS MiB',
  'B/agent',
  'RSS growth (N growth)',
  'marginal B/agent',
  'corpus MiB',
  'result',
];
const rows = [];
const previous = new Map();
for (const c of cases) {
  const r = await runCase(c);
  const before = previous.get(c.family);
  const growth =
    before && r.peakRss && before.peakRss ? `${(r.peakRss / before.peakRss).toFixed(2)}x (${(c.n / before.n).toFixed(0)}x)` : '';
  const marginal = before && r.peakRss && before.peakRss ? int((r.peakRss - before.peakRss) / (c.n - before.n)) : '';
  if (r.peakRss) previous.set(c.family, { n: c.n, peakRss: r.peakRss });
  const row = [
    c.label ?? c.name,
    int(c.n),
    r.events === undefined ? '-' : int(r.events),
    r.wallS.toFixed(1),
    r.events === undefined ? '-' : int(r.events / r.wallS),
    r.peakRss ? mib(r.peakRss) : '?',
    r.peakRss ? int(r.peakRss / c.n) : '?',
    growth,
    marginal,
    mib(r.corpusBytes),
    r.result,
  ];
  rows.push(row);
  console.log(
    `${c.name}: ${row
      .map((v, i) => `${header[i]} ${v}`)
      .slice(1)
      .join(', ')}`,
  );
}
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
const line = (cells) =>
  `| ${cells.map((v, i) => (i === 0 || i === cells.length - 1 ? String(v).padEnd(widths[i]) : String(v).padStart(widths[i]))).join(' | ')} |`;
console.log(
  `\n${line(header)}\n| ${widths.map((w, i) => (i === 0 || i === widths.length - 1 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`,
);
for (const r of rows) console.log(line(r));
console.log(
  "\nB/agent: peak RSS / N (the process's fixed part, ~100-200 MB of Node, DuckDB and buffers, dominates small N); marginal B/agent: the RSS added per agent from the previous size of the family; RSS growth: peak RSS over that of the previous size, next to the growth of N.",
);
rmSync(dir, { recursive: true, force: true });
