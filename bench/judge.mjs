// bench/judge: does an LLM judge slow a sweep down? The agents are `panta serve-surrogate` with a fixed latency
// per call, the judge a second `panta serve-surrogate` that takes 1 s per verdict (it grades the rubric by
// phrase matching and answers `{"tag": ...}`); the same sweep with 256 slots runs unjudged (reference judge)
// and judged (the LLM judge, `max_in_flight` left to its default), embedded and, with --distributed, with a
// scheduler, a collector and two workers against a scratch redis-server. Prints events/s of each, the ratio
// (goal: judged within ~10% of unjudged), and what the judge server saw: calls and most open at once.
// Run after a build: node bench/judge.mjs [--agent-ms 1000] [--judge-ms 1000] [--runs 48] [--sweeps 1] [--distributed | --distributed-only] [--repeated] [--with-64] [--repeat N]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchArgs, int, num } from './lib/args.mjs';

const root = resolve(import.meta.dirname, '..');
const cli = join(root, 'packages/cli/bin/panta.js');
const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  'agent-ms': { help: "the agents' latency per call, ms", value: num(0, true), default: 1000 },
  'judge-ms': { help: "the judge's latency per verdict, ms", value: num(0, true), default: 1000 },
  sweeps: { help: 'sweeps per run', value: int(), default: 1 },
  concurrency: { help: "the sweep's slots", value: int(), default: 256 },
  runs: { help: 'runs (one prompt each, from datasets/freshqa.jsonl)', value: int(), default: 48 },
  repeat: { help: 'times to run each measurement', value: int(), default: 1 },
  distributed: { help: 'also distributed (scheduler, collector, two workers, a scratch redis-server)' },
  'distributed-only': { help: 'distributed only' },
  repeated: { help: 'agents repeat their answers (the judge cache serves them) instead of distinct ones' },
  'with-64': { help: 'also a judged run at max_in_flight 64, the fixed default before the judge followed the sweep' },
});
const agentMs = flags['agent-ms'];
const judgeMs = flags['judge-ms'];
const { sweeps, repeat, runs } = flags;
const slots = flags.concurrency;
const distributedToo = flags.distributed;
const distributedOnly = flags['distributed-only'];
const distinct = !flags.repeated;
const with64 = flags['with-64'];
const dataset = join(root, 'datasets/freshqa.jsonl');
const prompts = readFileSync(dataset, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .slice(0, runs)
  .map((l) => JSON.parse(l).id);
const dir = mkdtempSync(join(tmpdir(), 'panta-bench-judge-'));
const children = [];

function proc(args, env = {}) {
  const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((ok) => child.once('close', (code) => ok({ code, out })));
  return { child, exited };
}

async function serve(latencyMs) {
  const server = proc(['serve-surrogate', '--port', '0', '--dataset', dataset, '--latency-ms', String(latencyMs)]);
  const url = await new Promise((ok, fail) => {
    server.child.stdout.on('data', (d) => {
      const m = /listening on (http:\/\/\S+?)\/v1/.exec(String(d));
      if (m) ok(m[1]);
    });
    server.exited.then(({ out }) => fail(new Error(`serve-surrogate exited:\n${out}`)));
  });
  return { url, pid: server.child.pid, stats: async () => (await fetch(`${url}/panta/stats`)).json() };
}

/**
 * Real models rarely repeat a sentence word for word, the surrogate repeats a few dozen per prompt (the verdict
 * cache would then hide the judge): this proxy in front of the agents' server makes every reply distinct by a
 * tag of consonants (no word, no digit, so it changes no verdict).
 */
async function paraphrasing(target) {
  let n = 0;
  const tag = () => {
    let k = n++;
    let s = '';
    do {
      s += 'bcdfghjklmnpqrstvwxz'[k % 20];
      k = Math.floor(k / 20);
    } while (k > 0);
    return s;
  };
  const proxy = createHttpServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const reply = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers: { 'content-type': 'application/json' },
      ...(req.method === 'POST' ? { body } : {}),
    });
    let text = await reply.text();
    if (reply.ok && req.method === 'POST') {
      const json = JSON.parse(text);
      json.choices[0].message.content += ` (draft ${tag()})`;
      text = JSON.stringify(json);
    }
    res.writeHead(reply.status, { 'content-type': 'application/json' }).end(text);
  });
  proxy.keepAliveTimeout = 60_000;
  await new Promise((ok) => proxy.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${proxy.address().port}`, close: () => proxy.close() };
}

const agentServer = await serve(agentMs);
const agents = distinct ? await paraphrasing(agentServer.url) : agentServer;
const judge = await serve(judgeMs);

// Rings of 64 over the prompts of freshqa, one temperature, one run a prompt.
const events = runs * 64 * (sweeps + 1);
/** judged: false (reference judge), true (LLM judge, max_in_flight left to its default) or the max_in_flight to set. */
function spec(name, judged) {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}
dataset: ${dataset}
prompts: [${prompts.join(', ')}]
geometries: [ring]
sizes: [64]
temperatures: [0.8]
sweeps: ${sweeps}
seed: 11
concurrency: ${slots}
backend: {kind: openai, base_url: "${agents.url}/v1", model: surrogate-potts-v1, max_in_flight: ${slots}}
judge: ${judged === false ? '{kind: reference}' : `{kind: llm, backend: {kind: openai, base_url: "${judge.url}/v1", model: surrogate-potts-v1${judged === true ? '' : `, max_in_flight: ${judged}`}}}`}
`,
  );
  return file;
}

/** CPU seconds a process has used so far (Linux: /proc), 0 once it is gone. */
function cpuOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Runs a role to its end, with the CPU it used (sampled until it exits: /proc forgets it then). */
async function timedProc(args, env) {
  const p = proc(args, env);
  let cpu = 0;
  const sampler = setInterval(() => (cpu = Math.max(cpu, cpuOf(p.child.pid))), 100);
  const result = await p.exited;
  clearInterval(sampler);
  return { ...result, cpu };
}

async function embedded(file, out) {
  const t0 = performance.now();
  const { code, out: log, cpu } = await timedProc(['run', file, '--out', out]);
  if (code !== 0) throw new Error(`embedded run failed:\n${log}`);
  return { wall: (performance.now() - t0) / 1000, cpu };
}

const freePort = () =>
  new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

let redisUrl;
async function startRedis() {
  const port = await freePort();
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
    {
      stdio: 'ignore',
    },
  );
  children.push(server);
  redisUrl = `redis://127.0.0.1:${port}`;
  const { Redis } = await import('ioredis');
  const probe = new Redis(redisUrl, { maxRetriesPerRequest: null });
  probe.on('error', () => undefined);
  for (let i = 0; i < 100 && (await probe.ping().catch(() => '')) !== 'PONG'; i++) await sleep(50);
  return probe;
}

async function distributed(file, out, redis) {
  await redis.flushall();
  const env = { PANTA_REDIS_URL: redisUrl };
  const t0 = performance.now();
  const collecting = timedProc(['collector', '--out', out], env);
  const workers = [0, 1].map(() => proc(['worker', '--concurrency', String(slots / 2)], env));
  const scheduling = timedProc(['scheduler', file], env);
  // A collector that fails leaves the scheduler waiting for it: stop the sweep and say why.
  const early = await Promise.race([scheduling.then(() => null), collecting.then((c) => (c.code === 0 ? null : c))]);
  if (early) {
    for (const c of children) if (c.spawnargs.includes('scheduler') || c.spawnargs.includes('worker')) c.kill('SIGTERM');
    throw new Error(`the collector exited with ${early.code}:\n${early.out.slice(-4000)}`);
  }
  const s = await scheduling;
  const c = await collecting;
  const wall = (performance.now() - t0) / 1000;
  const workersCpu = workers.reduce((sum, w) => sum + cpuOf(w.child.pid), 0);
  for (const w of workers) w.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
  if (s.code !== 0 || c.code !== 0) throw new Error(`distributed run failed:\n${s.out}\n${c.out}`);
  return { wall, cpu: s.cpu + c.cpu + workersCpu, collector: c.cpu };
}

const judgeCalls = (out) => JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).usage.judge_calls;
const rate = (s) => `${Math.round(events / s).toLocaleString('en-US')} events/s`;

console.log(
  `${events.toLocaleString('en-US')} events (${runs} rings of 64, ${sweeps} sweeps), ${slots} slots; agents ${agentMs} ms a call${distinct ? ', every reply distinct' : ''}, judge ${judgeMs} ms a verdict:`,
);
const servers = () => cpuOf(agentServer.pid) + cpuOf(judge.pid) + process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6;
const us = (seconds) => Math.round((1e6 * seconds) / events);
const cpuNote = (r, serversCpu) =>
  `CPU per event: Panta ${us(r.cpu)} us${r.collector === undefined ? '' : ` (the collector ${us(r.collector)} us)`}, servers and proxy ${us(serversCpu)} us`;
async function pair(mode, run) {
  const cases = [['unjudged', false], ...(with64 ? [['judged, 64', 64]] : []), ['judged', true]];
  // On a machine shared with others the load drifts: the cases alternate, and each keeps its fastest round.
  const best = new Map();
  for (let round = 0; round < repeat; round++) {
    for (const [label, judged] of cases) {
      const s0 = servers();
      const before = await judge.stats();
      const name = `${mode}-${label.replace(/\W+/g, '-')}-${round}`;
      const out = join(dir, name);
      // the server's high-water mark spans every case: sample what is open during this one (less the sampling request)
      let open = 0;
      const sampler = setInterval(async () => (open = Math.max(open, (await judge.stats()).open - 1)), 100);
      const r = await run(spec(name, judged), out);
      clearInterval(sampler);
      const after = await judge.stats();
      const result = { ...r, servers: servers() - s0, calls: after.completed - before.completed, recorded: judgeCalls(out), open };
      if (!best.has(label) || result.wall < best.get(label).wall) best.set(label, result);
    }
  }
  const plain = best.get('unjudged');
  for (const [label, judged] of cases) {
    const r = best.get(label);
    console.log(`  ${mode.padEnd(11)} ${label.padEnd(10)} ${r.wall.toFixed(1).padStart(5)} s  ${rate(r.wall)}  ${cpuNote(r, r.servers)}`);
    if (judged !== false)
      console.log(
        `${' '.repeat(14)}${(plain.wall / r.wall).toFixed(2)} of the unjudged speed (goal: at least 0.9); judge: ${r.calls.toLocaleString('en-US')} verdicts (manifest judge_calls ${r.recorded}), most open at once ${r.open}`,
      );
  }
}

try {
  if (!distributedOnly) await pair('embedded', embedded);
  if (distributedToo || distributedOnly) {
    const redis = await startRedis();
    await pair('distributed', (file, out) => distributed(file, out, redis));
    redis.disconnect();
  }
} finally {
  for (const c of children) c.kill('SIGTERM');
  if (distinct) agents.close();
  rmSync(dir, { recursive: true, force: true });
}
