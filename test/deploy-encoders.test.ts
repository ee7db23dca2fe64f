// The deploy files' CPUs and encoder device against the measured need of the four ONNX encoders on CPU
// (bench/NOTES.md: CPUs per GPU for the ONNX encoders): 348-359 CPU-ms an event, 7.2-7.4 cores per H100 at the
// ring lattice's 20.7 events/s. Static reads of the files, no scheduler: cheap.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** Cores per agent GPU the encoders need on CPU (the larger of the two measured runs, H100). */
const ENCODER_CORES_PER_GPU = 7.4;
/** Workers per GPU on Kubernetes and Compose (README's rule: 4 workers of 64 slots per vLLM batch of 256). */
const WORKERS_PER_GPU = 4;

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const cpu = (v: string | number): number => (typeof v === 'number' ? v : v.endsWith('m') ? Number(v.slice(0, -1)) / 1000 : Number(v));
const container = (file: string, name: string): any => {
  for (const doc of parseAllDocuments(read(file))) {
    const obj = doc.toJS();
    const found = obj?.spec?.template?.spec?.containers?.find((c: { name: string }) => c.name === name);
    if (found) return found;
  }
  throw new Error(`${file} has no container ${name}`);
};
const sbatch = (file: string, flag: string): number => Number(new RegExp(`^#SBATCH --${flag}=(?:gpu:)?(\\d+)`, 'm').exec(read(file))?.[1]);

describe('deploy files: CPUs for the encoders and where they run', () => {
  it('every worker layout requests at least the measured cores per GPU, and says so', () => {
    const worker = container('deploy/k8s/worker.yaml', 'worker');
    expect(cpu(worker.resources.requests.cpu) * WORKERS_PER_GPU).toBeGreaterThanOrEqual(ENCODER_CORES_PER_GPU);
    const shard = container('deploy/k8s/array/shards-job.yaml', 'shard');
    expect(cpu(shard.resources.requests.cpu)).toBeGreaterThanOrEqual(ENCODER_CORES_PER_GPU);
    expect(sbatch('deploy/slurm/panta.sbatch', 'cpus-per-task') / sbatch('deploy/slurm/panta.sbatch', 'gres')).toBeGreaterThanOrEqual(
      ENCODER_CORES_PER_GPU,
    );
    expect(
      sbatch('deploy/slurm/panta-array.sbatch', 'cpus-per-task') / sbatch('deploy/slurm/panta-array.sbatch', 'gres'),
    ).toBeGreaterThanOrEqual(ENCODER_CORES_PER_GPU);
    for (const file of [
      'deploy/k8s/worker.yaml',
      'deploy/k8s/array/shards-job.yaml',
      'deploy/slurm/panta.sbatch',
      'deploy/slurm/panta-array.sbatch',
      'docker-compose.yml',
    ])
      expect(read(file), file).toContain('bench/encoder-cores.mjs');
  });

  it('workers may put the encoders on their GPU; collectors, which have none, embed on CPU', () => {
    const env = (c: { env: { name: string; value?: string }[] }) => Object.fromEntries(c.env.map((e) => [e.name, e.value]));
    expect(env(container('deploy/k8s/worker.yaml', 'worker'))).toHaveProperty('PANTA_ENCODER_DEVICE');
    expect(env(container('deploy/k8s/collector-job.yaml', 'collector')).PANTA_ENCODER_DEVICE).toBe('cpu');
    const head = read('deploy/slurm/panta.sbatch');
    expect(head).toMatch(/^export PANTA_ENCODER_DEVICE="\$\{PANTA_ENCODER_DEVICE-cuda\}"$/m);
    const collectors = head.split('\n').filter((l) => /"\$\{PANTA\[@\]\}" collector /.test(l));
    expect(collectors.length).toBeGreaterThan(0);
    for (const l of collectors) expect(l.trimStart()).toMatch(/^PANTA_ENCODER_DEVICE=cpu /);
    // node.sh: each worker sees the GPU(s) of the vLLM server it calls, at its first start and at a restart.
    const node = read('deploy/slurm/node.sh');
    expect(node).toMatch(/CUDA_VISIBLE_DEVICES="\$3" setsid "\$\{PANTA\[@\]\}" worker/);
    for (const call of node.match(/^\s*start_worker .*$/gm) ?? []) expect(call.trim().split(/\s+/)).toHaveLength(4);
    expect(read('deploy/slurm/panta-array.sbatch')).toMatch(/^export PANTA_ENCODER_DEVICE="\$\{PANTA_ENCODER_DEVICE-cuda\}"$/m);
    expect(parse(read('docker-compose.yml'))).toBeTruthy();
  });
});
