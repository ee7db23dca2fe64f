// The hop between two consecutive calls of a chain, from the roles' traces (PANTA_HOP_TRACE=PREFIX: each role
// appends `point run event ms` lines to PREFIX.ROLE.PID; packages/cluster/src/hop-trace.ts). For every event e
// of a chain run (a mean field: each event reads the one before) the way from its predecessor's answer to its
// own call, in segments, in wall-clock ms:
//   commit     worker: e-1 answered -> its commit step returned
//   inbox      e-1 answered -> the scheduler read the commit from its inbox
//   executor   scheduler: read e-1's commit -> dispatched e (the executor's turn)
//   add        scheduler: dispatched e -> its job added to BullMQ (the flush's wait and the add)
//   take       e's job added -> a worker took it
//   read       worker: took e's job -> read what e reads from Redis
//   hop        e-1 answered -> e read: the whole hop, a chain's idle time between two calls
//   followed   the hops of continuations alone (e dispatched before e-1 was answered, left in Redis and
//              taken by the worker's commit of e-1: no inbox, executor, add or take on its way)
//   call       e read -> e answered (the worker's admission, the server's queue and its service), in two:
//   admit      e read -> its call's attempt began (the prompt built, the worker's admission waited for)
//   reply      the attempt began -> e answered (HTTP, the server's queue and service, the answer embedded)
// and, off the chain's way, collector: e-1 answered -> the collector read its commit.
// Usage: node bench/lib/hops.mjs PREFIX [RUN_PATTERN]   (RUN_PATTERN: a regular expression, default meanfield)
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Every point's first time per run and event: Map 'point' -> Map 'run|event' -> ms. */
export function readTraces(prefix) {
  const dir = dirname(prefix);
  const head = `${basename(prefix)}.`;
  const points = new Map();
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(head)) continue;
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (!line) continue;
      const [point, run, event, ms] = line.split(' ');
      let map = points.get(point);
      if (!map) points.set(point, (map = new Map()));
      const key = `${run}|${event}`;
      const t = Number(ms);
      if (!(map.get(key) <= t)) map.set(key, t);
    }
  }
  return points;
}

const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : Number.NaN);

/** Per segment: {n, p50, p90, p99, mean} in ms, over the chain hops of runs matching `runPattern`. */
export function hopSegments(points, runPattern = /meanfield/) {
  const at = (point, run, event) => points.get(point)?.get(`${run}|${event}`);
  const segments = {
    commit: [],
    inbox: [],
    executor: [],
    add: [],
    take: [],
    read: [],
    hop: [],
    followed: [],
    call: [],
    admit: [],
    reply: [],
    collector: [],
  };
  for (const key of points.get('dispatched')?.keys() ?? []) {
    const bar = key.lastIndexOf('|');
    const run = key.slice(0, bar);
    const event = Number(key.slice(bar + 1));
    if (!runPattern.test(run) || event === 0) continue;
    const prev = {
      answered: at('answered', run, event - 1),
      committed: at('committed', run, event - 1),
      learned: at('learned', run, event - 1),
      collected: at('collected', run, event - 1),
    };
    const cur = {
      dispatched: at('dispatched', run, event),
      added: at('added', run, event),
      taken: at('taken', run, event),
      read: at('read', run, event),
      sent: at('sent', run, event),
      answered: at('answered', run, event),
      claimed: at('claimed', run, event),
    };
    const push = (name, from, to) => from !== undefined && to !== undefined && segments[name].push(to - from);
    // A continuation: taken by e-1's commit, whoever learned of it when. Otherwise only an event dispatched after
    // its predecessor's answer was learned waited for it (a chain's hop).
    const continuation = cur.claimed !== undefined && prev.answered !== undefined;
    if (!continuation && (prev.learned === undefined || cur.dispatched === undefined || cur.dispatched < prev.learned)) continue;
    push('commit', prev.answered, prev.committed);
    if (continuation) {
      push('read', cur.claimed, cur.read);
      push('followed', prev.answered, cur.read);
    } else {
      push('inbox', prev.answered, prev.learned);
      push('executor', prev.learned, cur.dispatched);
      push('add', cur.dispatched, cur.added);
      push('take', cur.added, cur.taken);
      push('read', cur.taken, cur.read);
      push('collector', prev.answered, prev.collected);
    }
    push('hop', prev.answered, cur.read);
    push('call', cur.read, cur.answered);
    push('admit', cur.read, cur.sent);
    push('reply', cur.sent, cur.answered);
  }
  const out = {};
  for (const [name, list] of Object.entries(segments)) {
    const sorted = list.sort((a, b) => a - b);
    const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
    out[name] = { n: sorted.length, p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), p99: quantile(sorted, 0.99), mean };
  }
  return out;
}

/** The segments as lines of a table. */
export function hopTable(segments) {
  const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
  const lines = ['  segment     n       p50 ms   p90 ms   p99 ms   mean ms'];
  for (const [name, s] of Object.entries(segments))
    lines.push(
      `  ${name.padEnd(10)} ${String(s.n).padStart(6)} ${f(s.p50).padStart(8)} ${f(s.p90).padStart(8)} ${f(s.p99).padStart(8)} ${f(s.mean).padStart(9)}`,
    );
  return lines.join('\n');
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const [prefix, pattern] = process.argv.slice(2);
  if (!prefix) {
    console.error('usage: node bench/lib/hops.mjs PREFIX [RUN_PATTERN]');
    process.exit(2);
  }
  console.log(hopTable(hopSegments(readTraces(prefix), new RegExp(pattern ?? 'meanfield'))));
}
