// bench/encoder-cores: the CPU cores the paper's four ONNX encoders need per agent GPU. Each encoder runs on one
// onnxruntime thread (threads: 1) over answers of ~100 tokens (eraclitus's max_tokens with fixed_length), micro-
// batched as a worker's concurrent events are; the figure is sentences per CPU-second of the process (all
// threads), so other load on the machine slows the wall clock but not the figure much. Per event the four
// encoders each embed the answer once: CPU-s per event = 1/L6 + 1/L12 + 2/mpnet-base; cores per GPU = that x the
// events/s a GPU serves (--events-per-gpu; default 20.7, the ring lattice's rate under h100-qwen3-14b: `panta
// plan examples/eraclitus.yaml --gpu h100-qwen3-14b`, ring 256: 506,880 events in 6.80 agent GPU-hours).
// The models are random-weight BERTs of the real shapes (bench/lib/make-encoder-shape.py), not downloaded:
//   for s in "minilm-l6 6 384 12 1536" "minilm-l12 12 384 12 1536" "mpnet-base 12 768 12 3072"; do
//     set -- $s; python3 bench/lib/make-encoder-shape.py /tmp/enc-shapes/$1 $2 $3 $4 $5; done
//   node bench/encoder-cores.mjs [--dir /tmp/enc-shapes] [--events-per-gpu 20.7]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OnnxEncoder } from '@panta/embed';
import { benchArgs, num } from './lib/args.mjs';

const { values: flags } = benchArgs(import.meta.filename, '[flags]', {
  dir: { help: 'folder of minilm-l6, minilm-l12 and mpnet-base', value: String, default: '/tmp/enc-shapes' },
  'events-per-gpu': { help: 'events/s one agent GPU serves', value: num(0, true), default: 20.7 },
  tokens: { help: 'words (one token each) per answer', value: num(1), default: 100 },
  device: {
    help: 'cpu or cuda (cuda falls back to CPU with a warning where onnxruntime has no CUDA provider)',
    value: String,
    default: 'cpu',
  },
});
const vocab = Object.keys(JSON.parse(readFileSync(join(flags.dir, 'minilm-l6', 'tokenizer.json'), 'utf8')).model.vocab).filter((t) =>
  /^[a-z]{2,}$/.test(t),
);
const texts = (count) =>
  Array.from({ length: count }, (_, i) => Array.from({ length: flags.tokens }, (_, j) => vocab[(i * 31 + j * 7) % vocab.length]).join(' '));

async function perCpuSecond(name, count) {
  const e = await OnnxEncoder.fromOptions({ name, path: join(flags.dir, name), maxBatch: 32, threads: 1, device: flags.device });
  await e.encode(texts(32));
  const batch = texts(count);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(batch.map((t) => e.encode([t])));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  await e.close();
  return { name, provider: e.provider, perCpuS: count / cpuS, perWallS: count / wall };
}

const rows = [await perCpuSecond('minilm-l6', 512), await perCpuSecond('minilm-l12', 256), await perCpuSecond('mpnet-base', 128)];
for (const r of rows)
  console.log(
    `${r.name.padEnd(11)} on ${r.provider}: ${r.perCpuS.toFixed(1)} answers per CPU-second (${r.perWallS.toFixed(1)} per wall second), ${flags.tokens} tokens each, 1 thread, batches of up to 32`,
  );
const [l6, l12, base] = rows.map((r) => r.perCpuS);
const cpuPerEvent = 1 / l6 + 1 / l12 + 2 / base;
console.log(
  `four encoders (L6, L12, 2 x mpnet-base): ${(cpuPerEvent * 1000).toFixed(1)} CPU-ms per event, ${(1 / cpuPerEvent).toFixed(1)} events per core-second`,
);
console.log(`at ${flags['events-per-gpu']} events/s per GPU: ${(cpuPerEvent * flags['events-per-gpu']).toFixed(1)} cores per GPU`);
console.log(
  `load average during the run: ${(await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
