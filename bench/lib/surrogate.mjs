// `panta serve-surrogate` as a separate process, and its own counters (GET /panta/stats): requests answered
// and, under continuous batching, the slot-milliseconds its batch kept busy.
import { join } from 'node:path';
import { proc, root } from './panta.mjs';

/** Starts an endpoint on a free port with the given extra options; resolves once it listens. */
export async function startSurrogate(args) {
  return (await startSurrogates(1, args))[0];
}

/**
 * Starts `count` endpoints in one `serve-surrogate --endpoints count` process, each on a free port with its
 * own batch and counters; resolves once all listen. They share the process: `child`, `exited` and `stop`
 * are the process's.
 */
export async function startSurrogates(count, args) {
  const server = proc([
    'serve-surrogate',
    '--port',
    '0',
    '--endpoints',
    String(count),
    '--dataset',
    join(root, 'datasets/rheon6.jsonl'),
    ...args,
  ]);
  const urls = await new Promise((ok, fail) => {
    let seen = '';
    server.child.stdout.on('data', (d) => {
      seen += d;
      const found = [...seen.matchAll(/listening on (http:\/\/\S+?)\/v1/g)].map((m) => m[1]);
      if (found.length === count) ok(found);
    });
    server.exited.then(({ out }) => fail(new Error(`serve-surrogate exited:\n${out}`)));
  });
  const stop = () => server.child.kill('SIGTERM');
  return urls.map((url) => ({
    url,
    child: server.child,
    exited: server.exited,
    stats: async () => (await fetch(`${url}/panta/stats`)).json(),
    stop,
  }));
}
