// bench/encoders: sentences/s of the onnx encoder (the project's tiny BERT fixture, or a folder given as the
// first argument, e.g. a local all-MiniLM-L6-v2 export) with the micro-batcher at max batch 1, 8, 32 and 128,
// next to unbatched calls (one sentence per call, one call at a time, as a naive caller would), and the event
// loop's longest stall while embedding (goal: under 20 ms). Run after a build: node bench/encoders.mjs [DIR]
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { OnnxEncoder } from '@panta/embed';
import { benchArgs } from './lib/args.mjs';

const { positionals } = benchArgs(
  import.meta.filename,
  '[DIR]  (an ONNX model folder; default the tiny BERT test fixture)',
  {},
  { positional: 'DIR' },
);
const dir = resolve(positionals[0] ?? resolve(import.meta.dirname, '..', 'packages/embed/test/fixtures/tiny-encoder'));
const words =
  'the answer is 96 years old i am not sure she was born in 1926 and died at balmoral castle in scotland no such number exists'.split(' ');
const texts = Array.from({ length: 2048 }, (_, i) =>
  Array.from({ length: 6 + (i % 20) }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' '),
);

async function rate(_encoder, run, count) {
  const stall = monitorEventLoopDelay({ resolution: 1 });
  stall.enable();
  const t0 = performance.now();
  await run();
  const perSecond = count / ((performance.now() - t0) / 1000);
  stall.disable();
  return { perSecond, stallMs: stall.max / 1e6 };
}

const naive = await OnnxEncoder.fromOptions({ name: 'b', path: dir, maxBatch: 1, maxWaitMs: 0 });
await naive.encode(texts.slice(0, 16));
const unbatched = await rate(
  naive,
  async () => {
    for (const t of texts.slice(0, 512)) await naive.encode([t]);
  },
  512,
);
await naive.close();
console.log(`onnx encoder ${dir}:`);
console.log(
  `  unbatched (one sentence per call, sequential): ${Math.round(unbatched.perSecond)} sentences/s, longest event-loop stall ${unbatched.stallMs.toFixed(1)} ms`,
);
for (const maxBatch of [1, 8, 32, 128]) {
  const e = await OnnxEncoder.fromOptions({ name: 'b', path: dir, maxBatch, maxWaitMs: 2 });
  await e.encode(texts.slice(0, 64));
  // Events arrive concurrently, one sentence each: the micro-batcher gathers them into batches.
  const r = await rate(e, () => Promise.all(texts.map((t) => e.encode([t]))), texts.length);
  console.log(
    `  micro-batched, max batch ${String(maxBatch).padStart(3)}: ${Math.round(r.perSecond)} sentences/s (${(r.perSecond / unbatched.perSecond).toFixed(1)}x unbatched), longest event-loop stall ${r.stallMs.toFixed(1)} ms (goal: < 20 ms)`,
  );
  await e.close();
}
