// `panta serve-surrogate` as a separate process, and its own counters (GET /panta/stats): requests answered
// and, under continuous batching, the slot-milliseconds its batch kept busy.
import { join } from 'node:path';
import { proc, root } from './panta.mjs';

/** Starts an endpoint on a free port with the given extra options; resolves once it listens. */
export async function startSurrogate(args) {
  const server = proc(['serve-surrogate', '--port', '0', '--dataset', join(root, 'datasets/rheon6.jsonl'), ...args]);
  const url = await new Promise((ok, fail) => {
    let seen = '';
    server.child.stdout.on('data', (d) => {
      seen += d;
      const m = /listening on (http:\/\/\S+?)\/v1/.exec(seen);
      if (m) ok(m[1]);
    });
    server.exited.then(({ out }) => fail(new Error(`serve-surrogate exited:\n${out}`)));
  });
  const stats = async () => (await fetch(`${url}/panta/stats`)).json();
  return { url, child: server.child, exited: server.exited, stats, stop: () => server.child.kill('SIGTERM') };
}
