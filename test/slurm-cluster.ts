import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './helpers.js';

// A real single-node Slurm on this machine for the tests of deploy/slurm: munged, slurmctld and slurmd of
// Debian's slurm-wlm and munge (apt-get install slurm-wlm munge), each started here in the foreground with its
// key, sockets, state, spool and logs in a temporary folder, on free ports, and stopped by its pid. The node
// claims CPUs=64, plenty of memory and 8 GPUs (SlurmdParameters=config_overrides): the GPUs are character
// devices made with mknod (the kernel's /dev/null, 1:3) that gres.conf names, so that Slurm allocates them and
// sets CUDA_VISIBLE_DEVICES as on a GPU node; with Count= and no File= slurmd reports 0 GPUs and Slurm drains
// the node ("gres/gpu count reported lower than configured (0 < 8)"). Processes are tracked with
// proctrack/linuxproc and task/none: no cgroups needed. Needs root (SlurmUser=root, mknod).

export interface Slurm {
  /** The environment the Slurm clients (sbatch, scontrol) need: SLURM_CONF. */
  env: Record<string, string>;
  /** The node's name (this machine's short hostname). */
  node: string;
  /** `sbatch ARGS SCRIPT` with the environment given (exported to the job), once the job (every array task) has
   * ended: the exit code of the job (the largest of its tasks'; 128 + the signal of one killed). `during`, given the
   * job's id, runs while the job does (e.g. to kill one of its steps). */
  sbatch(script: string, args: string[], env: Record<string, string>, cwd: string, during?: (id: string) => Promise<void>): Promise<number>;
  stop(): Promise<void>;
}

const ACTIVE = new Set(['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED', 'REQUEUED', 'RESIZING', 'SIGNALING', 'STAGE_OUT']);
const has = (cmd: string) => !spawnSync('sh', ['-c', `command -v ${cmd}`]).status;

/** Why no real Slurm can start here, or null when it can. */
export function slurmMissing(): string | null {
  const missing = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'sinfo'].filter((c) => !has(c));
  if (missing.length > 0) return `${missing.join(', ')} not installed (apt-get install slurm-wlm munge)`;
  if (process.getuid?.() !== 0) return 'not root (slurmd runs jobs as root here, and the fake GPUs need mknod)';
  return null;
}

function freePorts(count: number): Promise<number[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<number>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => {
            const { port } = s.address() as { port: number };
            s.close(() => resolve(port));
          });
        }),
    ),
  );
}

/** Polls `check` until it returns true (a daemon coming up), failing with `what` and the log after `limitMs`. */
async function until(check: () => boolean, what: string, log: string, limitMs = 60_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > limitMs) {
      let tail = '';
      try {
        tail = readFileSync(log, 'utf8').split('\n').slice(-15).join('\n');
      } catch {}
      throw new Error(`${what} did not come up; ${log}:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startSlurm(): Promise<Slurm> {
  const dir = tempDir('panta-slurmd-');
  for (const d of ['munge', 'state', 'spool', 'log', 'dev']) mkdirSync(join(dir, d));
  chmodSync(join(dir, 'munge'), 0o700);
  const node = spawnSync('hostname', ['-s'], { encoding: 'utf8' }).stdout.trim();
  const [ctldPort, slurmdPort] = await freePorts(2);
  const key = join(dir, 'munge', 'munge.key');
  writeFileSync(key, Buffer.from(Array.from({ length: 1024 }, () => Math.floor(Math.random() * 256))));
  chmodSync(key, 0o400);
  const socket = join(dir, 'munge', 'munge.sock');
  for (let i = 0; i < 8; i++) {
    const r = spawnSync('mknod', [join(dir, 'dev', `gpu${i}`), 'c', '1', '3'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`mknod: ${r.stderr}`);
  }
  const conf = join(dir, 'slurm.conf');
  writeFileSync(
    conf,
    [
      'ClusterName=panta-test',
      `SlurmctldHost=${node}(127.0.0.1)`,
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${slurmdPort}`,
      'SlurmUser=root',
      'SlurmdUser=root',
      'AuthType=auth/munge',
      `AuthInfo=socket=${socket}`,
      'CredType=cred/munge',
      `StateSaveLocation=${join(dir, 'state')}`,
      `SlurmdSpoolDir=${join(dir, 'spool')}`,
      `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
      `SlurmdPidFile=${join(dir, 'slurmd.pid')}`,
      `SlurmctldLogFile=${join(dir, 'log', 'slurmctld.log')}`,
      `SlurmdLogFile=${join(dir, 'log', 'slurmd.log')}`,
      `PlugStackConfig=${join(dir, 'plugstack.conf')}`,
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      'MpiDefault=none',
      'SwitchType=switch/none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_CPU',
      'ReturnToService=2',
      'SlurmdParameters=config_overrides',
      'GresTypes=gpu',
      `NodeName=${node} NodeAddr=127.0.0.1 CPUs=64 RealMemory=262144 Gres=gpu:8 State=UNKNOWN`,
      `PartitionName=main Nodes=${node} Default=YES MaxTime=INFINITE State=UP`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'plugstack.conf'), '');
  writeFileSync(join(dir, 'gres.conf'), `AutoDetect=off\nName=gpu File=${join(dir, 'dev')}/gpu[0-7]\n`);
  const env = { SLURM_CONF: conf };
  const clientEnv = { ...process.env, ...env };

  const daemons: ChildProcess[] = [];
  const daemon = (cmd: string, args: string[]) => {
    const child = spawn(cmd, args, { env: clientEnv, stdio: 'ignore' });
    daemons.push(child);
    return child;
  };
  const stop = async () => {
    for (const child of daemons.reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  };
  try {
    daemon('munged', [
      '--foreground',
      '--force',
      `--key-file=${key}`,
      `--socket=${socket}`,
      `--pid-file=${join(dir, 'munge', 'munged.pid')}`,
      `--log-file=${join(dir, 'munge', 'munged.log')}`,
      `--seed-file=${join(dir, 'munge', 'seed')}`,
    ]);
    await until(() => spawnSync('munge', ['-n', `--socket=${socket}`]).status === 0, 'munged', join(dir, 'munge', 'munged.log'));
    daemon('slurmctld', ['-D', '-i', '-f', conf]);
    await until(
      () => spawnSync('scontrol', ['ping'], { env: clientEnv, encoding: 'utf8' }).stdout.includes('UP'),
      'slurmctld',
      join(dir, 'log', 'slurmctld.log'),
    );
    daemon('slurmd', ['-D', '-f', conf]);
    await until(
      () => spawnSync('sinfo', ['-h', '-N', '-o', '%T'], { env: clientEnv, encoding: 'utf8' }).stdout.trim() === 'idle',
      'slurmd (node idle)',
      join(dir, 'log', 'slurmd.log'),
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    env,
    node,
    stop,
    async sbatch(script, args, jobEnv, cwd, during) {
      // `sbatch --wait` polls the job at 2, 8 then 32 s: a few seconds' job took a minute. The job is polled here
      // instead (every array task, until each has ended), and the exit code is the largest of theirs.
      const submitted = spawnSync('sbatch', ['--parsable', ...args, script], { cwd, env: { ...jobEnv, ...env }, encoding: 'utf8' });
      if (submitted.status !== 0) throw new Error(`sbatch: ${submitted.stderr}`);
      const id = submitted.stdout.trim().split(';')[0]!;
      await during?.(id);
      for (;;) {
        const shown = spawnSync('scontrol', ['-o', 'show', 'job', id], { env: clientEnv, encoding: 'utf8' }).stdout.trim().split('\n');
        const jobs = shown.map((l) => ({ state: /\bJobState=(\S+)/.exec(l)?.[1], exit: /\bExitCode=(\d+):(\d+)/.exec(l) }));
        if (jobs.length > 0 && jobs.every((j) => j.state && !ACTIVE.has(j.state))) {
          return Math.max(...jobs.map((j) => (j.state === 'COMPLETED' ? 0 : Number(j.exit?.[1] ?? 0) || 128 + Number(j.exit?.[2] ?? 0))));
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    },
  };
}
