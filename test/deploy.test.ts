import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Ajv } from 'ajv';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDataset, parseSweepSpec } from '@panta/core';
import { corpusIdentity, runSweep } from '@panta/engine';
import { startSurrogateServer } from '@panta/llm';
import { RHEON6, ROOT, corpusDiff, pantaInProcess, tempDir } from './helpers.js';
import { type Slurm, slurmMissing, startSlurm } from './slurm-cluster.js';
import { AOF_REWRITE } from './redis-server.js';
import { unknownK8sFields } from './k8s-fields.js';

// The deployment files (deploy/, docker-compose*.yml) checked as far as a machine without Docker, GPUs or a
// Kubernetes cluster allows: the Compose files against the official Compose Specification schema and dclint,
// the kustomizations rendered by `kubectl kustomize` and every object checked against the API's schema and its known fields, every
// panta command line against the CLI's contract, Redis's settings on a real redis-server, the shell scripts
// with shellcheck, and the Slurm scripts run end to end on this machine by sbatch under a real slurmctld and
// slurmd (test/slurm-cluster.ts; srun and scontrol stubbed where Slurm is not installed), vLLM played by panta
// serve-surrogate, to corpora equal to the embedded run.

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
type Obj = Record<string, any>;
const has = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return !r.error && r.status === 0;
};

// ---- the command lines of panta the deployment files use (README: Run on a cluster; docs/DESIGN.md#commands) -------
const CONTRACT: Record<string, { positionals: [number, number]; flags: string[] }> = {
  scheduler: { positionals: [1, 1], flags: ['--redis', '--out', '--concurrency', '--seed', '--collectors'] },
  worker: { positionals: [0, 0], flags: ['--redis', '--concurrency', '--base-url', '--wait-endpoint', '--lock-ms'] },
  collector: { positionals: [0, 0], flags: ['--redis', '--out', '--base-url', '--shard', '--wait-endpoint'] },
  status: { positionals: [0, 0], flags: ['--redis'] },
  dashboard: { positionals: [0, 0], flags: ['--redis', '--port', '--host', '--allowed-hosts'] },
  run: { positionals: [1, 1], flags: ['--shard', '--out', '--concurrency'] },
  merge: { positionals: [2, Infinity], flags: [] },
  verify: { positionals: [1, 1], flags: [] },
};

/** Checks `panta ARGS` against the contract (every flag takes a value) and returns what it passes. */
function checkInvocation(argv: string[], where: string): { role: string; flags: Map<string, string>; positionals: string[] } {
  const [role, ...rest] = argv;
  const contract = CONTRACT[role!];
  if (!contract) throw new Error(`${where}: "${role}" is not a command the deployment files may use (${Object.keys(CONTRACT).join(', ')})`);
  const flags = new Map<string, string>();
  const positionals: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a.startsWith('-')) {
      if (!contract.flags.includes(a)) throw new Error(`${where}: panta ${role} takes no ${a} (it takes ${contract.flags.join(', ')})`);
      const value = rest[++i];
      if (value === undefined || value === '' || value.startsWith('--')) throw new Error(`${where}: ${a} has no value`);
      if (flags.has(a)) throw new Error(`${where}: ${a} given twice`);
      flags.set(a, value);
    } else positionals.push(a);
  }
  const [min, max] = contract.positionals;
  if (positionals.length < min || positionals.length > max)
    throw new Error(`${where}: panta ${role} takes ${min} to ${max} argument(s), got ${JSON.stringify(positionals)}`);
  return { role: role!, flags, positionals };
}

/**
 * Compose's interpolation: ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, ${VAR}, $VAR, $$, with
 * defaults themselves interpolated (nested, as Compose allows).
 */
function interpolateText(text: string, env: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (text.startsWith('$$', i)) {
      out += '$';
      i += 2;
    } else if (text.startsWith('${', i)) {
      let depth = 0;
      let j = i;
      for (; j < text.length; j++) {
        if (text.startsWith('${', j)) {
          depth++;
          j++;
        } else if (text[j] === '}' && --depth === 0) break;
      }
      const inner = text.slice(i + 2, j);
      const [, name, op, arg] = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([\s\S]*))?$/.exec(inner)!;
      const v = env[name!];
      if (op === ':-') out += v ? v : interpolateText(arg!, env);
      else if (op === '-') out += v ?? interpolateText(arg!, env);
      else if (op === ':?' || op === '?') {
        if (v === undefined || (op === ':?' && v === '')) throw new Error(`\${${name}} is required: ${arg}`);
        out += v;
      } else out += v ?? '';
      i = j + 1;
    } else {
      const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i));
      if (bare) {
        out += env[bare[1]] ?? '';
        i += bare[0].length;
      } else out += text[i++];
    }
  }
  return out;
}
function interpolate<T>(value: T, env: Record<string, string> = {}): T {
  if (typeof value === 'string') return interpolateText(value, env) as T;
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)])) as T;
  return value;
}

/** Every variable `${VAR...}` a Compose file reads (nested defaults included), with each default it gives it:
 * the text after :- or - (a nested variable as its name), undefined where it is required (:? or ?). */
function variablesRead(text: string): Map<string, Set<string | undefined>> {
  const found = new Map<string, Set<string | undefined>>();
  const scan = (t: string) => {
    for (let i = 0; i < t.length; i++) {
      if (t.startsWith('$$', i)) {
        i++;
        continue;
      }
      if (!t.startsWith('${', i)) continue;
      let depth = 0;
      let j = i;
      for (; j < t.length; j++) {
        if (t.startsWith('${', j)) {
          depth++;
          j++;
        } else if (t[j] === '}' && --depth === 0) break;
      }
      const [, name, op, arg] = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([\s\S]*))?$/.exec(t.slice(i + 2, j))!;
      const defaults = found.get(name!) ?? new Set();
      found.set(name!, defaults);
      if (op === ':-' || op === '-') defaults.add(arg!.replace(/\$\{([A-Za-z0-9_]+)[^}]*\}/g, '$1'));
      else if (op) defaults.add(undefined);
      if (arg) scan(arg);
      i = j;
    }
  };
  scan(text);
  return found;
}

/** Compose durations (1m30s, 5m, 300s, 2h) in seconds. */
function seconds(duration: string): number {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)/g))
    total += Number(n) * { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, ns: 1e-9 }[unit as 'h'];
  return total;
}

/** Memory sizes as Redis (6gb, 512mb) and Compose / Kubernetes (8g, 8Gi, 512Mi) write them, in bytes. */
function bytes(size: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)b?$/i.exec(size.trim());
  if (!m) throw new Error(`not a size: ${size}`);
  return Number(m[1]) * 1024 ** ' kmgt'.indexOf(m[2].toLowerCase() || ' ');
}

/** An image reference pinned to a version: a tag that is neither absent nor `latest` (or a digest). */
function expectPinned(image: string, where: string): void {
  expect(image, `${where}: ${image} is not pinned`).toMatch(/(:[\w][\w.-]*|@sha256:[0-9a-f]{64})$/);
  expect(image, `${where}: ${image} is not pinned`).not.toMatch(/:latest$/);
}

const EXAMPLE = parseSweepSpec(read('examples/eraclitus.yaml'), 'eraclitus.yaml');
/** The example spec's per-attempt timeout: a worker's grace period must outlast one attempt. */
const EXAMPLE_TIMEOUT_S = (EXAMPLE.backend as { timeout_ms: number }).timeout_ms / 1000;
/** What makes a corpus what it is, file locations aside (where the folders are mounted differs by platform). */
function identity(specText: string, file: string): Obj {
  const id = structuredClone(corpusIdentity(parseSweepSpec(specText, file))) as Obj;
  for (const e of id.encoders) delete e.path;
  id.dataset = String(id.dataset).split('/').at(-1); // relative to the spec file, which lives elsewhere
  return id;
}

// ---- a real redis-server, started with the deployment's own arguments ---------------------------------------
const servers: { kill: () => void }[] = [];
afterAll(() => servers.forEach((s) => s.kill()));

/** A free TCP port on 127.0.0.1, and whether `count` ports from it are all free. */
function portsFree(first: number, count: number): Promise<boolean> {
  return (async () => {
    for (let p = first; p < first + count; p++) {
      const free = await new Promise<boolean>((resolve) => {
        const s = createServer();
        s.once('error', () => resolve(false));
        s.listen(p, '0.0.0.0', () => s.close(() => resolve(true)));
      });
      if (!free) return false;
    }
    return true;
  })();
}
async function freePort(): Promise<number> {
  for (;;) {
    const p = 20000 + Math.floor(Math.random() * 40000);
    if (await portsFree(p, 1)) return p;
  }
}

/** One inline command (after AUTH when given a password), one reply, parsed just enough for CONFIG GET. */
function redisCommand(port: number, command: string, password?: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('redis did not answer')));
    socket.on('data', (d) => {
      data += d.toString();
      if (data.startsWith('-')) return reject(new Error(data.trim()));
      const body = password !== undefined ? data.replace(/^\+OK\r\n/, '') : data;
      const lines = body.split('\r\n');
      const count = Number(/^\*(\d+)/.exec(lines[0])?.[1]);
      const values = lines.slice(1).filter((_, i) => i % 2 === 1);
      if (!Number.isNaN(count) && values.length >= count) {
        socket.end();
        resolve(values.slice(0, count));
      }
    });
    socket.once('error', reject);
    socket.write(`${password !== undefined ? `AUTH ${password}\r\n` : ''}${command}\r\n`);
  });
}

/** Starts redis-server with `args` (the deployment's own, port and folder aside) and returns its effective config. */
async function liveRedisConfig(
  args: string[] | ((extra: string[]) => [string, string[]]),
  password?: string,
): Promise<Record<string, string>> {
  const port = await freePort();
  const dir = tempDir('panta-redis-');
  const extra = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir];
  const [cmd, argv] = typeof args === 'function' ? args(extra) : ['redis-server', [...args, ...extra]];
  const child = spawn(cmd, argv, { stdio: 'ignore' });
  servers.push({ kill: () => child.kill('SIGKILL') });
  for (let i = 0; ; i++) {
    try {
      if (password !== undefined) await expect(redisCommand(port, 'PING')).rejects.toThrow(/NOAUTH/);
      const reply = await redisCommand(port, 'CONFIG GET *', password);
      const config: Record<string, string> = {};
      for (let j = 0; j < reply.length; j += 2) config[reply[j]] = reply[j + 1];
      child.kill('SIGTERM');
      return config;
    } catch (e) {
      if (i > 100 || child.exitCode !== null) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * AOF fsynced on every write and rewritten only past 4gb (a sweep's churn would otherwise rewrite it every few
 * seconds), noeviction, and a maxmemory below `limit` bytes (else the OOM killer acts first).
 */
function expectRedisConfig(config: Record<string, string>, limit: number): void {
  expect(config).toMatchObject({
    appendonly: 'yes',
    appendfsync: 'always',
    'maxmemory-policy': 'noeviction',
    'auto-aof-rewrite-percentage': '100',
    'auto-aof-rewrite-min-size': String(4 * 1024 ** 3),
  });
  expect(Number(config.maxmemory)).toBeGreaterThan(0);
  expect(Number(config.maxmemory)).toBeLessThanOrEqual(0.8 * limit);
}

// ---- docker-compose.yml and docker-compose.workers.yml ----------------------------------------------------------
const COMPOSE_ENV = { REDIS_PASSWORD: 'p4ssw0rd-from-env', HEAD_HOST: '10.0.0.1' };
const loadCompose = (file: string, env: Record<string, string> = COMPOSE_ENV) =>
  interpolate(parse(read(file), { merge: true }) as Obj, env);
const compose = loadCompose('docker-compose.yml');
const services = compose.services as Record<string, Obj>;
const workersCompose = loadCompose('docker-compose.workers.yml');
const PANTA_SERVICES = ['scheduler', 'worker', 'collector', 'dashboard'];
const COMPOSE_FILES = ['docker-compose.yml', 'docker-compose.workers.yml'];

describe('the AOF rewrite thresholds', () => {
  const thresholds = { 'auto-aof-rewrite-percentage': '100', 'auto-aof-rewrite-min-size': String(4 * 1024 ** 3) };
  it("the tests' own Redis rewrites its AOF at the deploy files' thresholds, so the tests run Redis as deployed (checked on a real redis-server)", async () => {
    expect(await liveRedisConfig([...AOF_REWRITE, '--appendonly', 'yes'])).toMatchObject(thresholds);
  });

  it('deploy/k8s/redis.yaml sets them, also where no kubectl renders the kustomization (checked on a real redis-server)', async () => {
    const sts = parseAllDocuments(read('deploy/k8s/redis.yaml'))
      .map((d) => d.toJS() as Obj)
      .find((d) => d.kind === 'StatefulSet')!;
    const args = [...(sts.spec.template.spec.containers[0].args as string[]).slice(1)];
    args.splice(args.indexOf('--dir'), 2);
    args[args.indexOf('$(REDIS_PASSWORD)')] = 'from-the-secret';
    expect(await liveRedisConfig(args, 'from-the-secret')).toMatchObject(thresholds);
  });
});

/**
 * docker-compose.yml's Redis command: a shell script that gives redis-server its password on standard input
 * from the secret's file. `run` gives the argv to start it here (the secret's file at `secret`, redis-server
 * from PATH instead of the image's entrypoint, `extra` options appended); `args` the options it passes.
 */
function composeRedis(secret: string) {
  const command = services.redis.command as string[];
  expect(command.slice(0, 2)).toEqual(['sh', '-c']);
  const script = command[2].replaceAll('/run/secrets/redis_password', secret);
  expect(script).toContain('exec docker-entrypoint.sh redis-server - ');
  const run = (extra: string[]): [string, string[]] => [
    'sh',
    ['-c', script.replace('exec docker-entrypoint.sh redis-server - ', `exec redis-server - ${extra.join(' ')} `)],
  ];
  const printed = spawnSync('sh', ['-c', script.replace('exec docker-entrypoint.sh redis-server - ', "printf '%s\\n' ")], {
    encoding: 'utf8',
  });
  expect(printed.stderr).toBe('');
  return { script: command[2], run, args: printed.stdout.trimEnd().split('\n') };
}

describe("Redis's maxclients", () => {
  // A worker process holds 2 connections (packages/cluster/test/roles-redis.test.ts counts them with CLIENT LIST).
  const PER_WORKER = 2;
  it('docker-compose.yml and deploy/k8s/redis.yaml allow 4 workers per GPU on 2,000 GPUs, with the file descriptors Redis needs', () => {
    const secret = join(tempDir('panta-secret-'), 'redis_password');
    writeFileSync(secret, 'x');
    const command = composeRedis(secret).args;
    const maxclients = Number(command[command.indexOf('--maxclients') + 1]);
    expect(maxclients).toBeGreaterThanOrEqual(2000 * 4 * PER_WORKER + 2 + 64 * 2);
    const nofile = (services.redis.ulimits as { nofile: { soft: number; hard: number } }).nofile;
    expect(nofile.soft).toBeGreaterThanOrEqual(maxclients + 32);
    const sts = parseAllDocuments(read('deploy/k8s/redis.yaml'))
      .map((d) => d.toJS() as Obj)
      .find((d) => d.kind === 'StatefulSet')!;
    const args = sts.spec.template.spec.containers[0].args as string[];
    expect(Number(args[args.indexOf('--maxclients') + 1])).toBe(maxclients);
  });

  it('deploy/slurm/panta.sbatch sizes it from the job: 2 connections per GPU worker (16 GPUs a node at most) and per collector', () => {
    const script = read('deploy/slurm/panta.sbatch');
    expect(script).toMatch(/^maxclients \$REDIS_MAXCLIENTS$/m);
    const line = script.split('\n').find((l) => l.startsWith('export REDIS_MAXCLIENTS='))!;
    const value = (nodes: number, collectors: number) =>
      Number(
        spawnSync('bash', ['-c', `${line}; echo $REDIS_MAXCLIENTS`], {
          env: { PATH: process.env.PATH, SLURM_JOB_NUM_NODES: String(nodes), COLLECTORS: String(collectors) },
          encoding: 'utf8',
        }).stdout.trim(),
      );
    expect(value(125, 4)).toBeGreaterThanOrEqual((125 * 16 + 4) * PER_WORKER);
    expect(value(1000, 64)).toBeGreaterThanOrEqual((1000 * 16 + 64) * PER_WORKER);
  });
});

describe('docker-compose.yml and docker-compose.workers.yml', () => {
  it('are valid against the Compose Specification schema (vendored from compose-spec/compose-spec with its licence)', () => {
    const schemaDir = join(ROOT, 'test', 'fixtures', 'schemas', 'compose-spec');
    expect(readFileSync(join(schemaDir, 'LICENSE'), 'utf8')).toContain('Apache License');
    const { $schema, ...schema } = JSON.parse(readFileSync(join(schemaDir, 'compose-spec.json'), 'utf8'));
    expect(schema.title).toBe('Compose Specification');
    expect($schema).toMatch(/json-schema\.org\/draft-07\/schema/);
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    for (const doc of [compose, workersCompose]) {
      const ok = validate(doc);
      expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 1)).toEqual([]);
      expect(ok).toBe(true);
    }
    // the schema is strict: a misspelt key is refused, so the check above means something
    const typo = structuredClone(compose);
    typo.services.worker.restrat = 'always';
    expect(validate(typo)).toBe(false);
  });

  it("every variable they read is in the README's table of Compose variables, with the default the files give it", () => {
    const section = read('README.md').split('\n## Run on a cluster\n')[1]!.split('\n## ')[0]!;
    const table = section.split('\n| Compose variable | what | default |\n')[1]!.split('\n\n')[0]!;
    const rows = new Map(
      table
        .split('\n')
        .slice(1)
        .map((l) => l.split('|').map((c) => c.trim()))
        .map((c) => [c[1]!.replace(/^`|`$/g, ''), c[3]!] as const),
    );
    const read_ = variablesRead(read('docker-compose.yml') + read('docker-compose.workers.yml'));
    expect([...read_.keys()].length).toBeGreaterThan(20);
    for (const [name, defaults] of read_) {
      expect(rows.has(name), `${name} is read by the Compose files but not in the README's table of Compose variables`).toBe(true);
      for (const d of defaults)
        expect(rows.get(name), `${name}'s default`).toBe(d === undefined ? 'required' : d === '' ? 'empty' : `\`${d}\``);
    }
    for (const name of rows.keys()) expect(read_.has(name), `the README lists ${name}, which no Compose file reads`).toBe(true);
  });

  it('pass dclint with no error and no warning (key and service order aside: the files read in start-up order)', () => {
    const dclint = join(dirname(createRequire(import.meta.url).resolve('dclint/package.json')), 'bin', 'dclint.cjs');
    const order = ['service-keys-order', 'services-alphabetical-order', 'top-level-properties-order'];
    // dclint sees what it checks: an unbound port is an error (a file of its own, linted in the same call)
    const bad = join(tempDir('panta-dclint-'), 'compose.yml');
    writeFileSync(bad, "services:\n  x:\n    image: redis:7.4.2\n    ports:\n      - '6379:6379'\n");
    const files = [...COMPOSE_FILES.map((f) => join(ROOT, f)), bad];
    const r = spawnSync(process.execPath, [dclint, ...files, '--formatter', 'json', '--color', 'false', '--disable-rule', ...order], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).not.toBe(0);
    const results = JSON.parse(r.stdout) as { filePath: string; messages: Obj[]; errorCount: number; warningCount: number }[];
    expect(results.map((x) => x.filePath)).toEqual(files);
    for (const [i, file] of COMPOSE_FILES.entries()) {
      expect(results[i]!.messages, file).toEqual([]);
      expect([results[i]!.errorCount, results[i]!.warningCount], file).toEqual([0, 0]);
    }
    expect(results[2]!.messages.filter((m) => m.type === 'error').map((m) => m.rule)).toContain('no-unbound-port-interfaces');
  });

  it.skipIf(!has('docker', ['compose', 'version']))(
    'docker compose config accepts both files (skipped where the Compose plugin is not installed)',
    () => {
      for (const file of COMPOSE_FILES) {
        const r = spawnSync('docker', ['compose', '-f', join(ROOT, file), 'config', '--quiet'], {
          encoding: 'utf8',
          env: { ...process.env, ...COMPOSE_ENV },
        });
        expect(r.stderr, file).toBe('');
        expect(r.status, file).toBe(0);
      }
    },
  );

  it('has the services of the distributed mode; every dependency exists', () => {
    expect(Object.keys(services).sort()).toEqual(['collector', 'dashboard', 'redis', 'scheduler', 'vllm', 'vllm-judge', 'worker']);
    expect(Object.keys(workersCompose.services).sort()).toEqual(['vllm', 'worker']);
    for (const doc of [compose, workersCompose]) {
      for (const [name, svc] of Object.entries(doc.services as Record<string, Obj>)) {
        for (const dep of Object.keys(svc.depends_on ?? {})) expect(doc.services, `${name} depends on ${dep}`).toHaveProperty(dep);
      }
    }
    for (const name of PANTA_SERVICES) expect(services[name].depends_on.redis.condition, name).toBe('service_healthy');
  });

  it('every image is pinned to a version', () => {
    for (const doc of [compose, workersCompose])
      for (const [name, svc] of Object.entries(doc.services as Record<string, Obj>)) expectPinned(svc.image, name);
  });

  it('redis: AOF always, noeviction at a maxmemory below the container limit, a password from REDIS_PASSWORD (checked on a real redis-server)', async () => {
    const redis = services.redis!;
    expect(redis.image).toMatch(/^redis:7/);
    const secret = join(tempDir('panta-secret-'), 'redis_password');
    writeFileSync(secret, COMPOSE_ENV.REDIS_PASSWORD);
    expect(redis.volumes).toContainEqual('redis-data:/data');
    expect(compose.volumes).toHaveProperty('redis-data');
    // the password: from the secret's file, on no command line and in no environment (docker inspect shows both)
    expect(redis.secrets).toEqual(['redis_password']);
    expect(compose.secrets.redis_password).toEqual({ environment: 'REDIS_PASSWORD' });
    expect(JSON.stringify(redis.command)).not.toContain(COMPOSE_ENV.REDIS_PASSWORD);
    expect(JSON.stringify(redis.environment ?? {})).not.toContain(COMPOSE_ENV.REDIS_PASSWORD);
    expect(redis.healthcheck.test[0]).toBe('CMD-SHELL');
    expect(redis.healthcheck.test[1]).toContain('REDISCLI_AUTH="$(cat /run/secrets/redis_password)" redis-cli ping');
    const config = await liveRedisConfig(composeRedis(secret).run, COMPOSE_ENV.REDIS_PASSWORD);
    expectRedisConfig(config, bytes(redis.deploy.resources.limits.memory));
    // no password, no Redis: Compose refuses to start instead of running an open Redis
    expect(() => loadCompose('docker-compose.yml', {})).toThrow(/\{REDIS_PASSWORD\} is required/);
    expect(() => loadCompose('docker-compose.workers.yml', { HEAD_HOST: 'h' })).toThrow(/\{REDIS_PASSWORD\} is required/);
    expect(() => loadCompose('docker-compose.workers.yml', { REDIS_PASSWORD: 'x' })).toThrow(/\{HEAD_HOST\} is required/);
  });

  it('the roles get the password only inside PANTA_REDIS_URL: no command line carries --redis or the password', () => {
    for (const name of PANTA_SERVICES) {
      const svc = services[name];
      expect(svc.environment.PANTA_REDIS_URL, name).toBe(`redis://:${COMPOSE_ENV.REDIS_PASSWORD}@redis:6379`);
      expect(svc.command, name).not.toContain('--redis');
      expect(svc.command.join(' '), name).not.toContain(COMPOSE_ENV.REDIS_PASSWORD);
    }
    const worker = workersCompose.services.worker;
    expect(worker.environment.PANTA_REDIS_URL).toBe(`redis://:${COMPOSE_ENV.REDIS_PASSWORD}@${COMPOSE_ENV.HEAD_HOST}:6379`);
    expect(worker.command).not.toContain('--redis');
    // the head publishes Redis on the loopback unless told where the worker hosts reach it
    expect(services.redis!.ports).toEqual([{ target: 6379, published: '6379', host_ip: '127.0.0.1' }]);
    expect(loadCompose('docker-compose.yml', { ...COMPOSE_ENV, REDIS_PUBLISH: '10.0.0.1' }).services.redis.ports[0].host_ip).toBe(
      '10.0.0.1',
    );
  });

  it('every panta service runs a command of the contract, from the panta image', () => {
    for (const doc of [compose, workersCompose]) {
      for (const [name, svc] of Object.entries(doc.services as Record<string, Obj>)) {
        if (!svc.build) continue;
        expect(svc.build, name).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile' });
        expect(svc.image, name).toBe('panta:0.1.0');
        expect(svc.init, name).toBe(true);
        expect(checkInvocation(svc.command, `services.${name}.command`).role, name).toBe(name);
      }
    }
    // the default spec is in the repository (and so at /app/examples in the image)
    expect(existsSync(join(ROOT, checkInvocation(services.scheduler!.command, 'scheduler').positionals[0]))).toBe(true);
    // the workers call the vllm service unless told otherwise
    for (const doc of [compose, workersCompose])
      expect(checkInvocation(doc.services.worker.command, 'worker').flags.get('--base-url')).toBe('http://vllm:8000/v1');
  });

  it('the example spec can run: its api_key_env is set, its encoder folders are mounted at /models', () => {
    const keyEnv = (EXAMPLE.backend as { api_key_env?: string }).api_key_env!;
    const paths = EXAMPLE.encoders.flatMap((e) => ('path' in e && e.path ? [String(e.path)] : []));
    expect(paths.length).toBeGreaterThan(0);
    for (const svc of [services.scheduler!, services.worker!, services.collector!, workersCompose.services.worker]) {
      expect(svc.environment[keyEnv], keyEnv).toMatch(/\S/);
      const mounts = (svc.volumes as string[]).map((v) => v.split(':')[1]);
      for (const p of paths)
        expect(
          mounts.some((m) => p.startsWith(`${m}/`)),
          `mounts ${p}`,
        ).toBe(true);
    }
    expect(services.vllm!.environment[keyEnv]).toBe(services.worker!.environment[keyEnv]);
  });

  it("the example's judge is served (profile judge): its model, tensor parallel over GPUs of its own that hold its weights", () => {
    const url = new URL((EXAMPLE.judge as { backend: { base_url: string } }).backend.base_url);
    const judge = services[url.hostname];
    expect(judge, `no service ${url.hostname}`).toBeDefined();
    expect(judge!.profiles).toEqual(['judge']);
    const argv = judge!.command as string[];
    expect(argAfter(argv, '--port')).toBe(url.port);
    expect(argAfter(argv, '--host')).toBe('0.0.0.0');
    const model = (EXAMPLE.judge as { backend: { model: string } }).backend.model;
    expect(argAfter(argv, '--model')).toBe(model);
    const ids = (judge!.deploy.resources.reservations.devices[0].device_ids as string[]).flatMap((d) => d.split(','));
    const tp = Number(argAfter(argv, '--tensor-parallel-size'));
    expect(ids).toHaveLength(tp);
    // vllm takes the first GPU_COUNT GPUs (Docker's count): the judge's ids come after them
    const agents = Number(services.vllm!.deploy.resources.reservations.devices[0].count);
    for (const id of ids) expect(Number(id)).toBeGreaterThanOrEqual(agents);
    // BF16: 2 GB per billion parameters, within 0.9 x 80 GB per GPU less a fifth for the KV cache
    const params = Number(/(\d+)B/.exec(model)![1]);
    expect(params * 2 * 100).toBeLessThanOrEqual(tp * 80 * 72);
  });

  it("the collector waits for the judge's endpoint as long as the judge's server may take to start", () => {
    const argv = services.collector!.command as string[];
    const period = /^(\d+)m$/.exec(services['vllm-judge']!.healthcheck.start_period)!;
    expect(Number(argAfter(argv, '--wait-endpoint'))).toBeGreaterThanOrEqual(Number(period[1]) * 60);
    // and the workers for vllm's
    const vllmPeriod = /^(\d+)m$/.exec(services.vllm!.healthcheck.start_period)!;
    expect(Number(argAfter(services.worker!.command, '--wait-endpoint'))).toBeGreaterThanOrEqual(Number(vllmPeriod[1]) * 60);
  });

  it('vllm: one engine per reserved GPU (data parallel), batch invariance on by default, HF_HUB_OFFLINE as a switch', () => {
    for (const [file, env] of [
      ['docker-compose.yml', COMPOSE_ENV],
      ['docker-compose.yml', { ...COMPOSE_ENV, GPU_COUNT: '8' }],
      ['docker-compose.workers.yml', { ...COMPOSE_ENV, GPU_COUNT: '4' }],
      ['docker-compose.yml', { ...COMPOSE_ENV, GPU_COUNT: '2', TENSOR_PARALLEL_SIZE: '2', VLLM_GPUS: '4' }],
    ] as const) {
      const vllm = loadCompose(file, env).services.vllm;
      const arg = (flag: string) => vllm.command[vllm.command.indexOf(flag) + 1];
      const [device] = vllm.deploy.resources.reservations.devices;
      expect(device).toMatchObject({ driver: 'nvidia', capabilities: ['gpu'] });
      // every reserved GPU runs an engine: none idle, as with --tensor-parallel-size 1 on `count: all`
      expect(Number(device.count), `${file} ${JSON.stringify(env)}`).toBe(
        Number(arg('--data-parallel-size')) * Number(arg('--tensor-parallel-size')),
      );
      expect(vllm.environment.VLLM_BATCH_INVARIANT).toBe('1');
      expect(vllm.environment.HF_HUB_OFFLINE).toBe('0');
      expect(arg('--port')).toBe('8000');
      expect(vllm.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8000/health');
      expect(vllm.volumes).toContain('hf-cache:/root/.cache/huggingface');
    }
    const raw = (parse(read('docker-compose.yml')) as Obj).services.vllm.command as string[];
    expect(raw[raw.indexOf('--model') + 1]).toBe('${MODEL:-Qwen/Qwen3-14B}');
    expect(services.vllm!.profiles).toEqual(['gpu']);
  });

  it("the defaults keep every GPU's batch full and no more: workers x WORKER_CONCURRENCY = GPUs x MAX_NUM_SEQS; the scheduler follows the slots", () => {
    // a fixed --concurrency would cap the events in flight whatever the workers' slots
    expect(checkInvocation(services.scheduler!.command, 'scheduler').flags.has('--concurrency')).toBe(false);
    const perWorker = Number(checkInvocation(services.worker!.command, 'worker').flags.get('--concurrency'));
    const vllm = services.vllm!;
    const batch =
      Number(vllm.command[vllm.command.indexOf('--max-num-seqs') + 1]) *
      Number(vllm.command[vllm.command.indexOf('--data-parallel-size') + 1]);
    const workers = Number(/docker compose up --scale worker=(\d+)/.exec(read('docker-compose.yml'))![1]);
    expect(workers * perWorker).toBe(batch);
  });

  it('worker scales: no container_name, no host port, restarts unless stopped, a grace period past one LLM call', () => {
    for (const worker of [services.worker!, workersCompose.services.worker]) {
      expect(worker).not.toHaveProperty('container_name');
      expect(worker).not.toHaveProperty('ports');
      expect(worker.restart).toBe('unless-stopped');
      expect(seconds(worker.stop_grace_period)).toBeGreaterThan(EXAMPLE_TIMEOUT_S);
      expect(worker.depends_on.vllm).toEqual({ condition: 'service_healthy', required: false });
    }
    for (const svc of Object.values(services)) expect(svc).not.toHaveProperty('container_name');
  });

  it('scheduler and collector restart only on failure (they exit 0 when done); the collector writes to a volume', () => {
    expect(services.scheduler!.restart).toBe('on-failure');
    expect(services.collector!.restart).toBe('on-failure');
    const corpus = (services.collector!.volumes as string[]).find((v) => v.split(':')[1] === '/app/runs');
    expect(corpus).toBeDefined();
    expect(compose.volumes).toHaveProperty(corpus!.split(':')[0]);
    expect(EXAMPLE.out).toMatch(/^runs\//);
  });

  it('dashboard: port 8080 bound to 127.0.0.1 on the host only, healthy while /healthz answers', () => {
    const d = services.dashboard!;
    const call = checkInvocation(d.command, 'dashboard');
    expect(call.flags.get('--port')).toBe('8080');
    expect(call.flags.get('--allowed-hosts')).toBe('dashboard');
    expect(d.ports).toEqual(['127.0.0.1:8080:8080']);
    expect(d.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8080/healthz');
    for (const [name, svc] of Object.entries(services)) {
      for (const p of svc.ports ?? [])
        expect(typeof p === 'string' ? p : `${p.host_ip}:`, `${name} publishes ${JSON.stringify(p)} beyond the loopback`).toMatch(
          /^127\.0\.0\.1:/,
        );
    }
  });
});

// ---- deploy/Dockerfile and .dockerignore ------------------------------------------------------------------------
describe('the 4-bit option (the paper ran Qwen3-14B in 4 bits)', () => {
  it('the example and every file that starts its model name the quantised checkpoint, which the manifest records as the model', () => {
    for (const f of [
      'examples/eraclitus.yaml',
      'docker-compose.yml',
      'deploy/k8s/vllm.yaml',
      'deploy/slurm/panta.sbatch',
      'deploy/slurm/panta-array.sbatch',
    ])
      expect(read(f), f).toContain('Qwen/Qwen3-14B-AWQ');
    // the same spec with the 4-bit model is another corpus: the model is part of its identity
    const awq = read('examples/eraclitus.yaml').replace(/^ {2}model: Qwen\/Qwen3-14B\b.*$/m, '  model: Qwen/Qwen3-14B-AWQ');
    expect(parse(awq).backend.model).toBe('Qwen/Qwen3-14B-AWQ');
    expect(identity(awq, 'eraclitus.yaml')).not.toEqual(identity(read('examples/eraclitus.yaml'), 'eraclitus.yaml'));
  });
});

describe('deploy/Dockerfile', () => {
  const instructions = read('deploy/Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'))
    .map((l) => {
      const [, op, rest] = /^\s*(\w+)\s+(.*)$/.exec(l)!;
      return { op: op!.toUpperCase(), args: rest!.trim() };
    });
  const stages: { from: string; name?: string; body: typeof instructions }[] = [];
  for (const i of instructions) {
    if (i.op === 'FROM') {
      const [from, , name] = i.args.split(/\s+/);
      stages.push({ from: from!, name, body: [] });
    } else stages.at(-1)?.body.push(i);
  }
  const arg = (name: string) => instructions.find((i) => i.op === 'ARG' && i.args.startsWith(`${name}=`))!.args.slice(name.length + 1);
  const final = stages.at(-1)!;
  const gpu = stages.find((s) => s.name === 'gpu')!;

  it('builds on a pinned current LTS Node (22 or 24), and the gpu target on a pinned CUDA 12 + cuDNN runtime', () => {
    expect(arg('NODE_IMAGE')).toMatch(/^node:(22|24)\.\d+\.\d+-bookworm-slim$/);
    expect(final.from).toBe('${NODE_IMAGE}');
    expect(stages.find((s) => s.name === 'build')!.from).toBe('${NODE_IMAGE}');
    expect(gpu.from).toBe('${CUDA_IMAGE}');
    expect(arg('CUDA_IMAGE')).toMatch(/^nvidia\/cuda:12\.\d+\.\d+-cudnn-runtime-/);
    // the gpu target has Node from the official image and the application from the build stage
    expect(gpu.body).toContainEqual({ op: 'COPY', args: '--from=node /usr/local/bin/node /usr/local/bin/node' });
    expect(gpu.body).toContainEqual({ op: 'COPY', args: '--from=build /app /app' });
    expect(read('deploy/Dockerfile')).toContain('--target gpu --build-arg ONNXRUNTIME_NODE_INSTALL=cuda12');
  });

  it('both runtime targets and the Slurm scripts that start panta set the malloc thresholds the benches measure', () => {
    const value = /const DEPLOY_MALLOC = '([^']+)'/.exec(read('bench/lib/panta.mjs'))![1]!;
    expect(value).toMatch(/^glibc\.malloc\.mmap_threshold=\d+:glibc\.malloc\.trim_threshold=\d+$/);
    for (const stage of [final, gpu]) expect(stage.body).toContainEqual({ op: 'ENV', args: `GLIBC_TUNABLES=${value}` });
    for (const script of ['panta.sbatch', 'node.sh', 'panta-array.sbatch']) {
      const text = read(`deploy/slurm/${script}`);
      expect(text, script).toContain(`PANTA_MALLOC=${value}\n`);
      expect(text, script).toMatch(/PANTA=\(env "GLIBC_TUNABLES=\$\{GLIBC_TUNABLES:-\$PANTA_MALLOC\}" /);
    }
  });

  it('caches the dependency layer: every workspace manifest is copied before npm ci, the sources after it', () => {
    const build = stages.find((s) => s.name === 'build')!.body;
    const ci = build.findIndex((i) => i.op === 'RUN' && /\bnpm ci\b/.test(i.args));
    const sources = build.findIndex((i) => i.op === 'COPY' && i.args === '. .');
    expect(ci).toBeGreaterThan(0);
    expect(sources).toBeGreaterThan(ci);
    const before = build
      .slice(0, ci)
      .filter((i) => i.op === 'COPY')
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces;
    for (const file of ['package.json', 'package-lock.json', '.npmrc', ...workspaces.map((w) => `${w}/package.json`)])
      expect(before, file).toContain(file);
    expect(before.some((f) => f.includes('src'))).toBe(false);
    // npm ci never downloads the CUDA provider; a GPU build names it and runs the install script by hand
    expect(build[ci].args).toMatch(/ONNXRUNTIME_NODE_INSTALL=skip npm ci --ignore-scripts/);
    expect(build[ci].args).toMatch(/ONNXRUNTIME_NODE_INSTALL="\$\{ONNXRUNTIME_NODE_INSTALL\}" node script\/install\.js/);
    expect(instructions).toContainEqual({ op: 'ARG', args: 'ONNXRUNTIME_NODE_INSTALL=skip' });
    expect(build.slice(sources).some((i) => i.op === 'RUN' && /npm run build/.test(i.args) && /npm prune --omit=dev/.test(i.args))).toBe(
      true,
    );
    expect((JSON.parse(read('package.json')) as { allowScripts: Record<string, boolean> }).allowScripts['onnxruntime-node']).toBe(false);
  });

  it('both runtime targets run as a non-root user, from /app, with the panta CLI as ENTRYPOINT', () => {
    for (const stage of [final, gpu]) {
      expect(stage.body.filter((i) => i.op === 'USER').at(-1)!.args).not.toMatch(/^(root|0)(:|$)/);
      expect(stage.body.find((i) => i.op === 'WORKDIR')!.args).toBe('/app');
      const entry = JSON.parse(stage.body.find((i) => i.op === 'ENTRYPOINT')!.args) as string[];
      expect(entry.find((a) => a.endsWith('.js'))).toBe('/app/packages/cli/bin/panta.js');
    }
    const pkg = JSON.parse(read('packages/cli/package.json')) as { bin: Record<string, string> };
    expect(join('packages/cli', pkg.bin.panta!)).toBe('packages/cli/bin/panta.js');
    expect(existsSync(join(ROOT, 'packages/cli/bin/panta.js'))).toBe(true);
  });

  it('HEALTHCHECK: healthy while the container reaches its Redis with its own credentials (run against a real redis-server)', async () => {
    const checks = [final, gpu].map((s) => s.body.find((i) => i.op === 'HEALTHCHECK')!.args);
    expect(checks[0]).toBe(checks[1]);
    const argv = JSON.parse(/CMD (\[.*\])$/.exec(checks[0])![1]) as string[];
    expect(argv[0]).toBe('node');
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--requirepass', 'right-pass'], {
      stdio: 'ignore',
    });
    servers.push({ kill: () => child.kill('SIGKILL') });
    await new Promise((r) => setTimeout(r, 300));
    const probe = (url: string) =>
      spawnSync(process.execPath, argv.slice(1), {
        cwd: ROOT,
        env: { ...process.env, PANTA_REDIS_URL: url },
        encoding: 'utf8',
        timeout: 30_000,
      });
    let healthy = probe(`redis://:right-pass@127.0.0.1:${port}`);
    for (let i = 0; healthy.status !== 0 && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 200));
      healthy = probe(`redis://:right-pass@127.0.0.1:${port}`);
    }
    expect(healthy.status).toBe(0);
    const wrong = probe(`redis://:wrong-pass@127.0.0.1:${port}`);
    expect(wrong.status).toBe(1);
    expect(`${wrong.stdout}${wrong.stderr}`).not.toContain('wrong-pass');
    child.kill('SIGTERM');
    expect(probe(`redis://:right-pass@127.0.0.1:${port}`).status).toBe(1);
  });

  it('.dockerignore leaves out installs, builds, corpora and git, but not what npm ci and tsc -b need', () => {
    const patterns = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const p of ['.git', '**/node_modules', '**/dist', 'runs/', '**/*.tsbuildinfo']) expect(patterns).toContain(p);
    const needed = [
      'package.json',
      'package-lock.json',
      '.npmrc',
      'tsconfig.json',
      'tsconfig.base.json',
      'packages/cli/bin/panta.js',
      'packages/core/src/index.ts',
      'datasets/rheon6.jsonl',
      'examples/eraclitus.yaml',
    ];
    const toRegExp = (p: string) =>
      new RegExp(
        `^${p
          .replace(/\/$/, '')
          .replace(/[.+^$()|[\]]/g, '\\$&')
          .replace(/\*\*\//g, '(.*/)?')
          .replace(/\*/g, '[^/]*')}(/|$)`,
      );
    for (const file of needed) {
      expect(existsSync(join(ROOT, file)), file).toBe(true);
      expect(
        patterns.filter((p) => toRegExp(p).test(file)),
        file,
      ).toEqual([]);
    }
  });
});

// ---- deploy/k8s: rendered by kubectl kustomize ---------------------------------------------------------------
const KUBECTL = has('kubectl', ['version', '--client']);
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
};
function render(dir: string): Obj[] {
  const r = spawnSync('kubectl', ['kustomize', join(ROOT, dir)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${r.stderr}`);
  return parseAllDocuments(r.stdout).map((d) => {
    expect(d.errors, dir).toEqual([]);
    return d.toJS() as Obj;
  });
}
const podSpec = (o: Obj): Obj => o.spec.template.spec;
const allContainers = (pod: Obj): Obj[] => [...(pod.initContainers ?? []), ...pod.containers];
const envValue = (c: Obj, name: string) => (c.env as Obj[] | undefined)?.find((e) => e.name === name);
const argAfter = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

/** Kubernetes' $(VAR) expansion from the container's own env (values only; secret references stay as they are). */
function expandArgs(c: Obj): string[] {
  const env = Object.fromEntries((c.env ?? []).filter((e: Obj) => 'value' in e).map((e: Obj) => [e.name, e.value]));
  return (c.args as string[]).map((a) => a.replace(/\$\(([A-Z0-9_]+)\)/g, (m, v) => env[v] ?? m));
}

/** The argv that `sh -c SCRIPT` gives panta, with the environment given: the script run, panta replaced by printf. */
function shellArgv(script: string, env: Record<string, string>): string[] {
  const stubbed = script.replace(/(exec )?(\/usr\/bin\/tini -- )?node \/app\/packages\/cli\/bin\/panta\.js/g, "printf '%s\\n'");
  const r = spawnSync('sh', ['-c', stubbed], { env: { PATH: process.env.PATH!, ...env }, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.trimEnd().split('\n');
}

describe(KUBECTL ? 'deploy/k8s' : 'deploy/k8s (skipped: kubectl is not installed here; install it to render the kustomizations)', () => {
  const base = KUBECTL ? render('deploy/k8s') : [];
  const array = KUBECTL ? render('deploy/k8s/array') : [];
  const merge = KUBECTL ? render('deploy/k8s/array/merge') : [];
  const byKind = (docs: Obj[], kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name)!;
  const withPods = (docs: Obj[]) => docs.filter((d) => d.spec?.template);
  const pantaContainers = (docs: Obj[]) =>
    withPods(docs).flatMap((doc) =>
      (podSpec(doc).containers as Obj[]).filter((c) => c.image.startsWith('panta:')).map((c) => ({ doc, c })),
    );

  it.runIf(KUBECTL)('renders the objects of each way to run, each valid against the Kubernetes API schema', () => {
    const kinds = (docs: Obj[]) => docs.map((d) => `${d.kind}/${d.metadata.name}`).sort();
    expect(kinds(base)).toEqual(
      [
        'ConfigMap/panta-spec',
        'Deployment/panta-worker',
        'Deployment/vllm',
        'Deployment/vllm-judge',
        'Job/panta-collector',
        'Job/panta-fetch-models',
        'Job/panta-scheduler',
        'Namespace/panta',
        'PersistentVolumeClaim/panta-corpus',
        'PersistentVolumeClaim/panta-hf-cache',
        'PersistentVolumeClaim/panta-models',
        'Secret/panta-llm',
        'Secret/panta-redis',
        'Service/redis',
        'Service/vllm',
        'Service/vllm-judge',
        'StatefulSet/redis',
      ].sort(),
    );
    expect(kinds(array)).toEqual(
      [
        'ConfigMap/panta-spec-local',
        'Deployment/vllm-judge',
        'Job/panta-fetch-models',
        'Job/panta-shards',
        'Namespace/panta',
        'PersistentVolumeClaim/panta-hf-cache',
        'PersistentVolumeClaim/panta-models',
        'PersistentVolumeClaim/panta-parts',
        'Secret/panta-llm',
        'Service/vllm-judge',
      ].sort(),
    );
    expect(kinds(merge)).toEqual(['Job/panta-merge']);
    for (const doc of [...base, ...array, ...merge]) {
      if (doc.kind !== 'Namespace') expect(doc.metadata.namespace, `${doc.kind}/${doc.metadata.name}`).toBe('panta');
      const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
      expect(Model, `no schema for ${doc.apiVersion} ${doc.kind}`).toBeDefined();
      expect(() => new Model!(doc).validate(), `${doc.kind} ${doc.metadata?.name}`).not.toThrow();
    }
    const broken = structuredClone(byKind(base, 'Deployment', 'panta-worker'));
    broken.spec.replicas = 'eight';
    expect(() => new Deployment(broken).validate()).toThrow(/replicas/);
  });

  it.runIf(KUBECTL)('no rendered object holds a field the Kubernetes API does not know, at any depth', () => {
    // The schema's validators let such a field through (the API server drops it without a word): the strict check
    // does not. A copy of a rendered object with a misspelt field goes through the same check as the rendered ones
    // (one TypeScript program for all): it alone is named.
    const misspelt = structuredClone(byKind(base, 'Deployment', 'vllm'));
    misspelt.metadata.name = 'vllm-misspelt';
    const probe = podSpec(misspelt).containers[0].readinessProbe ?? podSpec(misspelt).containers[0].startupProbe;
    probe.httpGet.hots = '127.0.0.1';
    expect(() => new Deployment(misspelt).validate()).not.toThrow();
    const errors = unknownK8sFields([...base, ...array, ...merge, misspelt]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^Deployment\/vllm-misspelt: .*'"hots"' does not exist in type 'IHTTPGetAction'/);
  });

  it.runIf(KUBECTL)('every image is pinned; panta gets the tag from kustomization.yaml', () => {
    for (const doc of withPods([...base, ...array, ...merge])) {
      for (const c of allContainers(podSpec(doc))) expectPinned(c.image, `${doc.metadata.name}/${c.name}`);
    }
    expect(pantaContainers(base).map(({ c }) => c.image)).toContain('panta:0.1.0');
  });

  it.runIf(KUBECTL)('selectors match their pod templates; every referenced claim, config map and secret is defined', () => {
    for (const docs of [base, [...array, ...merge]]) {
      for (const doc of docs) {
        if (doc.spec?.selector?.matchLabels) expect(doc.spec.template.metadata.labels).toMatchObject(doc.spec.selector.matchLabels);
        if (doc.kind === 'Service') {
          const pods = withPods(docs).map((d) => d.spec.template.metadata.labels as Obj);
          expect(
            pods.some((labels) => Object.entries(doc.spec.selector).every(([k, v]) => labels[k] === v)),
            `Service ${doc.metadata.name} selects no pod`,
          ).toBe(true);
        }
        if (!doc.spec?.template) continue;
        const pod = podSpec(doc);
        const claims = docs.filter((d) => d.kind === 'PersistentVolumeClaim').map((d) => d.metadata.name);
        for (const v of pod.volumes ?? []) {
          // the merge Job is applied after deploy/k8s/array, whose claims it reads
          if (v.persistentVolumeClaim)
            expect([...claims, ...array.filter((d) => d.kind === 'PersistentVolumeClaim').map((d) => d.metadata.name)], v.name).toContain(
              v.persistentVolumeClaim.claimName,
            );
          if (v.configMap) expect(byKind(docs, 'ConfigMap', v.configMap.name), v.name).toBeDefined();
        }
        for (const c of allContainers(pod)) {
          const volumes = (pod.volumes ?? [])
            .map((v: Obj) => v.name)
            .concat((doc.spec.volumeClaimTemplates ?? []).map((t: Obj) => t.metadata.name));
          for (const m of c.volumeMounts ?? []) expect(volumes, `${doc.metadata.name}/${c.name}: ${m.name}`).toContain(m.name);
          for (const e of c.env ?? []) {
            const ref = e.valueFrom?.secretKeyRef;
            if (ref && !ref.optional)
              expect(byKind(docs, 'Secret', ref.name)?.stringData ?? {}, `${c.name}: ${e.name}`).toHaveProperty(ref.key);
          }
        }
      }
    }
  });

  it.runIf(KUBECTL)(
    'no claim is empty and read-only: every claim a pod reads is written by some pod (the fetch Job fills the model claims)',
    () => {
      for (const docs of [base, array]) {
        for (const pvc of docs.filter((d) => d.kind === 'PersistentVolumeClaim')) {
          expect(pvc.spec.accessModes, pvc.metadata.name).not.toContain('ReadOnlyMany');
          const writers = withPods([...docs, ...merge]).filter((doc) => {
            const pod = podSpec(doc);
            const vol = (pod.volumes ?? []).find(
              (v: Obj) => v.persistentVolumeClaim?.claimName === pvc.metadata.name && !v.persistentVolumeClaim.readOnly,
            );
            return vol && allContainers(pod).some((c) => (c.volumeMounts ?? []).some((m: Obj) => m.name === vol.name && !m.readOnly));
          });
          expect(writers.length, `${pvc.metadata.name} is written by no pod`).toBeGreaterThan(0);
          // claims read on many nodes at once must be ReadWriteMany
          const readers = withPods(docs).filter((doc) =>
            (podSpec(doc).volumes ?? []).some((v: Obj) => v.persistentVolumeClaim?.claimName === pvc.metadata.name),
          );
          if (readers.length > 1) expect(pvc.spec.accessModes, pvc.metadata.name).toEqual(['ReadWriteMany']);
        }
      }
      const fetch = byKind(base, 'Job', 'panta-fetch-models');
      const marker = podSpec(fetch).containers[0];
      expect(marker.command).toEqual(['touch', '/models/.panta-filled', '/root/.cache/huggingface/.panta-filled']);
      // it downloads the model vLLM serves and the encoders the spec names, into the folders the spec reads
      const download = podSpec(fetch).initContainers.find((c: Obj) => c.name === 'download');
      const vllmArgs = podSpec(byKind(base, 'Deployment', 'vllm')).containers[0].args as string[];
      expect(envValue(download, 'MODEL').value).toBe(argAfter(vllmArgs, '--model'));
      const fetched = (envValue(download, 'ENCODERS').value as string).split(/\s+/).map((r) => `/models/${r.split('/').at(-1)}`);
      expect(EXAMPLE.encoders.map((e) => String((e as { path?: string }).path)).sort()).toEqual(fetched.sort());
      expect(podSpec(fetch).initContainers.find((c: Obj) => c.name === 'check').args[0]).toContain('models check');
    },
  );

  it.runIf(KUBECTL)('pods that need the models wait for the fetch Job (bounded, logging what they wait for)', () => {
    for (const doc of withPods([...base, ...array]).filter(
      (d) => d.metadata.name !== 'panta-fetch-models' && d.metadata.name !== 'redis',
    )) {
      const waits = (podSpec(doc).initContainers ?? []).filter((c: Obj) => /^wait-for-/.test(c.name));
      expect(waits.length, doc.metadata.name).toBeGreaterThan(0);
      for (const w of waits) {
        expect(w.args[0]).toMatch(/for _ in \$\(seq \d+\)/);
        expect(w.args[0]).toMatch(/\.panta-filled/);
        expect(w.args[0]).toMatch(/echo "waiting for/);
        expect(w.args[0]).toMatch(/exit 1\s*$/);
      }
    }
  });

  it.runIf(KUBECTL)(
    'redis: a StatefulSet with a claim, AOF always, noeviction at a maxmemory below its limit, a password from a Secret (checked on a real redis-server)',
    async () => {
      const sts = byKind(base, 'StatefulSet', 'redis');
      expect(byKind(base, 'Service', 'redis').spec.clusterIP).toBe('None');
      expect(sts.spec.serviceName).toBe('redis');
      expect(sts.spec.replicas).toBe(1);
      const [c] = podSpec(sts).containers as Obj[];
      expect(c!.image).toMatch(/^redis:7/);
      expect(c!.volumeMounts).toContainEqual(
        expect.objectContaining({ mountPath: '/data', name: sts.spec.volumeClaimTemplates[0].metadata.name }),
      );
      for (const name of ['REDIS_PASSWORD', 'REDISCLI_AUTH'])
        expect(envValue(c!, name).valueFrom.secretKeyRef).toEqual({ name: 'panta-redis', key: 'password' });
      for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe'])
        expect(c![probe].exec.command).toEqual(['redis-cli', 'ping']);
      expect(c!.args[0]).toBe('redis-server');
      const args = (c!.args as string[]).slice(1);
      expect(argAfter(args, '--requirepass')).toBe('$(REDIS_PASSWORD)');
      args.splice(args.indexOf('--dir'), 2); // the test gives its own folder
      args[args.indexOf('$(REDIS_PASSWORD)')] = 'from-the-secret';
      expectRedisConfig(await liveRedisConfig(args, 'from-the-secret'), bytes(c!.resources.limits.memory));
    },
  );

  it.runIf(KUBECTL)(
    'every panta container gets Redis only from PANTA_REDIS_URL, with the password from the Secret, and runs a command of the contract as the image user',
    () => {
      const roles = pantaContainers(base).map(({ doc, c }) => {
        const names = (c.env as Obj[]).map((e) => e.name);
        expect(envValue(c, 'REDIS_PASSWORD').valueFrom.secretKeyRef).toEqual({ name: 'panta-redis', key: 'password' });
        // Kubernetes expands $(VAR) only from variables defined before it
        expect(names.indexOf('REDIS_PASSWORD')).toBeLessThan(names.indexOf('PANTA_REDIS_URL'));
        expect(envValue(c, 'PANTA_REDIS_URL').value).toBe('redis://:$(REDIS_PASSWORD)@redis:6379');
        const call = checkInvocation(expandArgs(c), `${doc.metadata.name}: ${c.name}`);
        expect(call.flags.has('--redis')).toBe(false);
        expect(podSpec(doc).securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
        return call.role;
      });
      expect(roles.sort()).toEqual(['collector', 'scheduler', 'worker']);
    },
  );

  it.runIf(KUBECTL)(
    'vllm: one GPU per replica, probes on /health, its cache on a claim read offline, batch invariance on and recorded in the spec',
    () => {
      const vllm = byKind(base, 'Deployment', 'vllm');
      const c = podSpec(vllm).containers.find((x: Obj) => x.name === 'vllm');
      expect(c.resources.requests['nvidia.com/gpu']).toBe('1');
      expect(c.resources.limits['nvidia.com/gpu']).toBe('1');
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) expect(c[probe].httpGet.path).toBe('/health');
      expect(envValue(c, 'HF_HUB_OFFLINE').value).toBe('1');
      expect(envValue(c, 'VLLM_BATCH_INVARIANT').value).toBe('1');
      const cache = c.volumeMounts.find((m: Obj) => m.mountPath === '/root/.cache/huggingface');
      expect(podSpec(vllm).volumes.find((v: Obj) => v.name === cache.name).persistentVolumeClaim.claimName).toBe('panta-hf-cache');
      const spec = parse(byKind(base, 'ConfigMap', 'panta-spec').data['sweep.yaml']);
      expect(spec.backend.batch_invariant).toBe(true);
      expect(spec.judge.backend.batch_invariant).toBe(true);
    },
  );

  it.runIf(KUBECTL)(
    "slots match vLLM's batch: worker replicas x their --concurrency = vLLM replicas x --max-num-seqs; the scheduler follows the slots",
    () => {
      const worker = byKind(base, 'Deployment', 'panta-worker');
      const vllm = byKind(base, 'Deployment', 'vllm');
      const scheduler = podSpec(byKind(base, 'Job', 'panta-scheduler')).containers[0];
      expect(checkInvocation(expandArgs(scheduler), 'scheduler').flags.has('--concurrency')).toBe(false);
      const perWorker = Number(checkInvocation(expandArgs(podSpec(worker).containers[0]), 'worker').flags.get('--concurrency'));
      expect(worker.spec.replicas * perWorker).toBe(
        vllm.spec.replicas * Number(argAfter(podSpec(vllm).containers[0].args, '--max-num-seqs')),
      );
      expect(podSpec(worker).terminationGracePeriodSeconds).toBeGreaterThan(EXAMPLE_TIMEOUT_S);
      expect(podSpec(worker).containers[0].lifecycle?.preStop).toBeUndefined();
    },
  );

  it.runIf(KUBECTL)(
    'scheduler and collector: Jobs restarted on failure; the scheduler reads the ConfigMap spec, the collector writes to a claim',
    () => {
      const scheduler = byKind(base, 'Job', 'panta-scheduler');
      const collector = byKind(base, 'Job', 'panta-collector');
      for (const job of [scheduler, collector]) expect(podSpec(job).restartPolicy).toBe('OnFailure');
      const sc = podSpec(scheduler).containers[0];
      const specPath = checkInvocation(expandArgs(sc), 'scheduler').positionals[0];
      const mount = (sc.volumeMounts as Obj[]).find((m) => specPath.startsWith(`${m.mountPath}/`))!;
      expect(mount.mountPath).toBe('/app/spec');
      const cm = byKind(base, 'ConfigMap', podSpec(scheduler).volumes.find((v: Obj) => v.name === mount.name).configMap.name);
      const text = cm.data[specPath.slice(mount.mountPath.length + 1)];
      // the ConfigMap holds the example sweep (the same corpus), whose dataset resolves to the image's /app/datasets
      expect(identity(text, 'sweep.yaml')).toEqual(identity(read('examples/eraclitus.yaml'), 'eraclitus.yaml'));
      expect(existsSync(join(ROOT, 'datasets', parse(text).dataset.replace('../datasets/', '')))).toBe(true);
      const cc = podSpec(collector).containers[0];
      const corpus = (cc.volumeMounts as Obj[]).find((m) => m.mountPath === '/app/runs')!;
      const claim = podSpec(collector).volumes.find((v: Obj) => v.name === corpus.name).persistentVolumeClaim.claimName;
      expect(byKind(base, 'PersistentVolumeClaim', claim).spec.accessModes).toEqual(['ReadWriteOnce']);
      expect(podSpec(collector).securityContext.fsGroup).toBe(1000);
    },
  );

  it.runIf(KUBECTL)('array: an Indexed Job of panta run --shard I/N (1-based) next to a vLLM sidecar that must be healthy first', () => {
    const job = byKind(array, 'Job', 'panta-shards');
    expect(job.spec.completionMode).toBe('Indexed');
    const pod = podSpec(job);
    const shard = pod.containers.find((c: Obj) => c.name === 'shard');
    const n = envValue(shard, 'SHARDS').value;
    expect(job.spec.completions).toBe(Number(n));
    expect(job.spec.parallelism).toBe(Number(n));
    const sidecar = pod.initContainers.find((c: Obj) => c.name === 'vllm');
    expect(sidecar.restartPolicy).toBe('Always'); // a native sidecar: the shard starts once its startup probe passes
    expect(sidecar.startupProbe.httpGet).toMatchObject({ path: '/health', port: 8000 });
    expect(sidecar.resources.limits['nvidia.com/gpu']).toBe('1');
    expect(envValue(sidecar, 'VLLM_BATCH_INVARIANT').value).toBe('1');
    expect(envValue(sidecar, 'HF_HUB_OFFLINE').value).toBe('1');
    expect(shard.command).toEqual(['sh', '-c']);
    const parts: string[] = [];
    for (const index of [0, Number(n) - 1]) {
      const call = checkInvocation(shellArgv(shard.args[0], { JOB_COMPLETION_INDEX: String(index), SHARDS: n }), 'shard');
      expect(call.flags.get('--shard')).toBe(`${index + 1}/${n}`);
      expect(call.flags.get('--concurrency')).toBe(argAfter(sidecar.args, '--max-num-seqs'));
      expect(call.positionals[0]).toMatch(/^\/app\/spec\//);
      parts.push(call.flags.get('--out')!);
    }
    expect(parts[0]).not.toBe(parts[1]);
    expect(shard.volumeMounts.find((m: Obj) => parts[0].startsWith(`${m.mountPath}/`)).name).toBe('parts');
    // the shards' spec: the example's corpus, the agents at the sidecar, the independent judge at its own server
    const spec = byKind(array, 'ConfigMap', 'panta-spec-local').data['sweep.yaml'];
    expect(identity(spec, 'sweep.yaml')).toEqual(identity(read('examples/eraclitus.yaml'), 'eraclitus.yaml'));
    const parsed = parse(spec);
    expect(parsed.backend.base_url).toBe('http://127.0.0.1:8000/v1');
    expect(parsed.judge.backend.base_url).not.toMatch(/127\.0\.0\.1|localhost/);
    expect(argAfter(sidecar.args, '--port')).toBe('8000');
    // the merge joins the parts where the shards wrote them, then verifies
    const m = podSpec(byKind(merge, 'Job', 'panta-merge')).containers[0];
    const [mergeCall, verifyCall] = m.args[0].split('&&').map((part: string) => checkInvocation(shellArgv(part, {}), 'merge'));
    expect(mergeCall.role).toBe('merge');
    expect(mergeCall.positionals.slice(1)).toEqual(['/app/runs/parts/part-*']); // no part in this folder: the glob stays
    expect(parts[0]).toMatch(/^\/app\/runs\/parts\/part-\d+$/);
    expect(verifyCall).toMatchObject({ role: 'verify', positionals: [mergeCall.positionals[0]] });
  });

  it.runIf(KUBECTL)(
    "the spec's judge is served: its Service runs vLLM with the judge's model on GPUs that hold its weights, fetched first",
    () => {
      // the array's shards call the same judge Service
      const local = parse(byKind(array, 'ConfigMap', 'panta-spec-local').data['sweep.yaml']);
      expect(byKind(array, 'Service', new URL(local.judge.backend.base_url).hostname)).toBeDefined();
      const spec = parse(byKind(base, 'ConfigMap', 'panta-spec').data['sweep.yaml']);
      const url = new URL(spec.judge.backend.base_url);
      const service = byKind(base, 'Service', url.hostname);
      expect(service, `no Service ${url.hostname}`).toBeDefined();
      expect(service.spec.ports.map((p: Obj) => p.port)).toContain(Number(url.port));
      const deployment = withPods(base).find((d) =>
        Object.entries(service.spec.selector).every(([k, v]) => d.spec.template.metadata.labels[k] === v),
      )!;
      const c = podSpec(deployment).containers[0];
      expect(argAfter(c.args, '--model')).toBe(spec.judge.backend.model);
      const tp = Number(argAfter(c.args, '--tensor-parallel-size') ?? 1);
      expect(c.resources.limits['nvidia.com/gpu']).toBe(String(tp));
      // BF16: 2 GB per billion parameters; with 0.9 of each 80 GB GPU and a fifth of it for the KV cache
      const params = Number(/(\d+)B/.exec(spec.judge.backend.model)![1]);
      expect(params * 2).toBeGreaterThan(80); // the 72B judge needs more than one GPU: the check below bites
      expect(params * 2 * 100).toBeLessThanOrEqual(tp * 80 * 72);
      const download = podSpec(byKind(base, 'Job', 'panta-fetch-models')).initContainers.find((i: Obj) => i.name === 'download');
      expect(envValue(download, 'JUDGE_MODEL').value).toBe(spec.judge.backend.model);
    },
  );

  it('redis.yaml: the AOF claim names where its storage class is set and why a network volume stalls appendfsync always', () => {
    const text = read('deploy/k8s/redis.yaml');
    const template = text.slice(text.indexOf('volumeClaimTemplates:'));
    expect(template).toMatch(/^ {8}# storageClassName: \S+/m);
    expect(template).toMatch(/EDIT: a node-local SSD class/);
    expect(template).toMatch(/network volume/);
  });

  it.runIf(KUBECTL)("Redis's first step refuses the Secret's public placeholder password, in one line, and starts on a real one", () => {
    const sts = byKind(base, 'StatefulSet', 'redis');
    const preflight = podSpec(sts).initContainers.find((c: Obj) => c.name === 'preflight');
    expect(preflight, 'no preflight init container').toBeDefined();
    expect(envValue(preflight, 'REDIS_PASSWORD').valueFrom.secretKeyRef).toEqual({ name: 'panta-redis', key: 'password' });
    const run = (password: string) =>
      spawnSync('sh', ['-c', preflight.args[0]], { env: { PATH: process.env.PATH!, REDIS_PASSWORD: password }, encoding: 'utf8' });
    for (const bad of [byKind(base, 'Secret', 'panta-redis').stringData.password, 'short']) {
      const r = run(bad);
      expect(r.status, bad).toBe(2);
      expect(r.stdout.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toMatch(/^deploy\/k8s\/redis-secret\.yaml: password .*openssl rand -hex 32/);
    }
    expect(run('0123456789abcdef0123456789abcdef').status).toBe(0);
  });

  it.runIf(KUBECTL)("the collector waits for the judge's endpoint as long as the judge's startup probe allows", () => {
    const probe = podSpec(byKind(base, 'Deployment', 'vllm-judge')).containers[0].startupProbe;
    const c = podSpec(byKind(base, 'Job', 'panta-collector')).containers[0];
    expect(Number(argAfter(c.args, '--wait-endpoint'))).toBeGreaterThanOrEqual(probe.periodSeconds * probe.failureThreshold);
    const vllmProbe = podSpec(byKind(base, 'Deployment', 'vllm')).containers[0].startupProbe;
    const worker = podSpec(byKind(base, 'Deployment', 'panta-worker')).containers[0];
    expect(Number(argAfter(worker.args, '--wait-endpoint'))).toBeGreaterThanOrEqual(vllmProbe.periodSeconds * vllmProbe.failureThreshold);
  });

  it.runIf(KUBECTL)(
    "probes reach the pod: no probe sets host (the kubelet would probe its node's loopback), every vLLM binds all interfaces",
    () => {
      for (const doc of withPods([...base, ...array, ...merge])) {
        for (const c of allContainers(podSpec(doc))) {
          for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
            const get = c[probe]?.httpGet ?? c[probe]?.tcpSocket;
            if (get) expect(get.host, `${doc.metadata.name}/${c.name} ${probe}`).toBeUndefined();
          }
          if (/^vllm\//.test(c.image) && c.args?.includes('--model'))
            expect(argAfter(c.args, '--host'), `${doc.metadata.name}/${c.name}`).toBe('0.0.0.0');
        }
      }
    },
  );

  describe('preflight.sh names each edit a first apply lacks, in one line, before anything is applied', () => {
    const PREFLIGHT = 'deploy/k8s/preflight.sh';
    // kubectl for `kustomize`; the cluster's storage classes (name, provisioner, default) from CLASSES, or no cluster
    const stub = join(tempDir('panta-k8s-preflight-'), 'kubectl');
    writeFileSync(
      stub,
      '#!/bin/bash\nif [[ $1 == kustomize ]]; then exec kubectl "$@"; fi\n[[ -f ${CLASSES:-} ]] || { echo "The connection to the server localhost:8080 was refused" >&2; exit 1; }\ncat "$CLASSES"\n',
    );
    chmodSync(stub, 0o755);
    const preflight = (root: string, dir: string, classes?: string) => {
      let file = '';
      if (classes !== undefined) {
        file = join(tempDir('panta-k8s-classes-'), 'classes');
        writeFileSync(file, classes);
      }
      const r = spawnSync('bash', [join(root, PREFLIGHT), dir], {
        cwd: root,
        env: { PATH: process.env.PATH!, KUBECTL: stub, CLASSES: file },
        encoding: 'utf8',
      });
      return { code: r.status, lines: r.stderr.trim().split('\n') };
    };
    const CLAIM_FIX = 'set storageClassName to a class that provides ReadWriteMany (NFS-, CephFS- or cloud-file-backed)';

    it.runIf(KUBECTL)('the shipped files: the image in no registry, the placeholder password, the claims without a class', () => {
      const r = preflight(ROOT, 'deploy/k8s');
      expect(r.code).toBe(2);
      expect(r.lines).toEqual([
        'deploy/k8s/kustomization.yaml: images: panta\'s newName is "panta", in no registry the nodes can pull from: push the image (docker build -f deploy/Dockerfile -t REGISTRY/panta:TAG .) and set newName to REGISTRY/panta',
        'deploy/k8s/redis-secret.yaml: password is the public placeholder: set your own (openssl rand -hex 32)',
        `deploy/k8s/shared/volumes.yaml: panta-hf-cache: no storageClassName, and no cluster answers to say whether its default class can be ReadWriteMany: ${CLAIM_FIX}`,
        `deploy/k8s/shared/volumes.yaml: panta-models: no storageClassName, and no cluster answers to say whether its default class can be ReadWriteMany: ${CLAIM_FIX}`,
      ]);
      // a cluster whose default class is block storage: the claims would stay Pending
      const block = preflight(ROOT, 'deploy/k8s/array', 'gp3\tebs.csi.aws.com\ttrue\n');
      expect(block.code).toBe(2);
      expect(block.lines.slice(1)).toEqual(
        [
          'deploy/k8s/shared/volumes.yaml: panta-hf-cache',
          'deploy/k8s/shared/volumes.yaml: panta-models',
          'deploy/k8s/array/parts-volume.yaml: panta-parts',
        ].map(
          (c) => `${c}: the cluster's default class "gp3" is block storage (ebs.csi.aws.com), which cannot be ReadWriteMany: ${CLAIM_FIX}`,
        ),
      );
      expect(preflight(ROOT, 'deploy/k8s/array/merge').lines).toEqual([
        'deploy/k8s/array/merge/kustomization.yaml: images: panta\'s newName is "panta", in no registry the nodes can pull from: push the image (docker build -f deploy/Dockerfile -t REGISTRY/panta:TAG .) and set newName to REGISTRY/panta',
      ]);
    });

    it.runIf(KUBECTL)(
      'the files edited as their comments say: ready to apply; a class the cluster lacks or of block storage is named',
      () => {
        const root = tempDir('panta-k8s-edited-');
        mkdirSync(join(root, 'deploy'));
        spawnSync('cp', ['-r', join(ROOT, 'deploy', 'k8s'), join(root, 'deploy', 'k8s')]);
        const edit = (file: string, from: RegExp, to: string) => {
          const path = join(root, 'deploy', 'k8s', file);
          const text = readFileSync(path, 'utf8');
          expect(text).toMatch(from);
          writeFileSync(path, text.replace(from, to));
        };
        for (const k of ['kustomization.yaml', 'array/kustomization.yaml', 'array/merge/kustomization.yaml'])
          edit(k, /newName: panta\b/, 'newName: registry.example.org/panta');
        edit('redis-secret.yaml', /password: change-me\S*/, 'password: 0123456789abcdef0123456789abcdef');
        for (const v of ['shared/volumes.yaml', 'array/parts-volume.yaml'])
          edit(v, /# storageClassName: nfs-client .*/g, 'storageClassName: nfs-client');
        const classes = 'gp3\tebs.csi.aws.com\ttrue\nnfs-client\tnfs.csi.k8s.io\t\n';
        for (const dir of ['deploy/k8s', 'deploy/k8s/array', 'deploy/k8s/array/merge']) {
          const r = preflight(root, dir, classes);
          expect(r.lines, dir).toEqual([`preflight: ${dir} is ready to apply (kubectl apply -k ${dir})`]);
          expect(r.code).toBe(0);
        }
        // set, but the cluster lacks the class, or it is block storage
        expect(preflight(root, 'deploy/k8s', 'gp3\tebs.csi.aws.com\ttrue\n').lines[0]).toBe(
          `deploy/k8s/shared/volumes.yaml: panta-hf-cache: the cluster has no storage class "nfs-client": ${CLAIM_FIX}`,
        );
        expect(preflight(root, 'deploy/k8s', 'nfs-client\tpd.csi.storage.gke.io\t\n').lines[1]).toBe(
          `deploy/k8s/shared/volumes.yaml: panta-models: storage class "nfs-client" is block storage (pd.csi.storage.gke.io), which cannot be ReadWriteMany: ${CLAIM_FIX}`,
        );
        // a short password
        edit('redis-secret.yaml', /password: \S+/, 'password: short');
        expect(preflight(root, 'deploy/k8s', classes).lines).toEqual([
          'deploy/k8s/redis-secret.yaml: password is shorter than 16 characters: set your own (openssl rand -hex 32)',
        ]);
      },
    );

    it.skipIf(!has('shellcheck', ['--version']))('shellcheck finds nothing in it', () => {
      const r = spawnSync('shellcheck', [join(ROOT, PREFLIGHT)], { encoding: 'utf8' });
      expect(r.stdout, r.stdout).toBe('');
      expect(r.status).toBe(0);
    });
  });
});

// ---- deploy/slurm ----------------------------------------------------------------------------------------------
const SLURM = 'deploy/slurm';
const SCRIPTS = ['node.sh', 'panta-array.sbatch', 'panta-merge.sbatch', 'panta.sbatch'];

/** The last lines of every log in a job's log folder, for a failure's message. */
function logTails(dir: string, lines = 15): string {
  if (!existsSync(dir)) return `(no log folder ${dir})`;
  return readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .sort()
    .map((f) => `--- ${f}\n${readFileSync(join(dir, f), 'utf8').trimEnd().split('\n').slice(-lines).join('\n')}`)
    .join('\n');
}

describe('deploy/slurm', () => {
  it('every script passes bash -n and shellcheck', () => {
    expect(
      readdirSync(join(ROOT, SLURM))
        .filter((f) => !f.endsWith('.yaml'))
        .sort(),
    ).toEqual(SCRIPTS);
    for (const s of SCRIPTS) {
      const r = spawnSync('bash', ['-n', join(ROOT, SLURM, s)], { encoding: 'utf8' });
      expect(r.stderr, s).toBe('');
      expect(r.status, s).toBe(0);
    }
  });

  it.skipIf(!has('shellcheck', ['--version']))(
    'shellcheck finds nothing in the shell scripts (skipped where shellcheck is not installed: apt-get install shellcheck)',
    () => {
      const r = spawnSync('shellcheck', ['--shell=bash', ...SCRIPTS.map((s) => join(ROOT, SLURM, s))], { encoding: 'utf8' });
      expect(r.stdout, r.stdout).toBe('');
      expect(r.status).toBe(0);
    },
  );

  it('every panta command line is of the contract, through the repository entry point', () => {
    const roles: string[] = [];
    for (const s of SCRIPTS) {
      const text = read(`${SLURM}/${s}`);
      for (const [, line] of text.matchAll(/"\$\{PANTA\[@\]\}" ([^>&\n]*)/g)) {
        const argv = line!
          .replace(/\\$/, '')
          .trim()
          .split(/\s+/)
          .map((a) => a.replace(/^"|"$/g, ''));
        roles.push(checkInvocation(argv, `${SLURM}/${s}: ${line}`).role);
      }
      if (roles.length) expect(text, s).toContain('/packages/cli/bin/panta.js"');
    }
    expect(roles.sort()).toEqual(['collector', 'collector', 'merge', 'run', 'scheduler', 'verify', 'worker']);
    expect(read(`${SLURM}/node.sh`)).toMatch(/worker --concurrency "\$WORKER_CONCURRENCY" --base-url "http:\/\/127\.0\.0\.1:\$2\/v1"/);
  });

  it("eraclitus-local.yaml is the example sweep (the same corpus) with the agents' endpoint at the placeholder the array script rewrites, the judge at its own server", () => {
    const text = read(`${SLURM}/eraclitus-local.yaml`);
    expect(identity(text, 'eraclitus-local.yaml')).toEqual(identity(read('examples/eraclitus.yaml'), 'eraclitus.yaml'));
    const spec = parse(text);
    expect(spec.backend.base_url).toBe('http://127.0.0.1:8000/v1');
    expect(spec.judge.backend.base_url).not.toMatch(/127\.0\.0\.1|localhost/);
    expect(read(`${SLURM}/panta-array.sbatch`)).toContain('s#http://127.0.0.1:8000/v1#http://127.0.0.1:$port/v1#g');
    expect(existsSync(join(ROOT, SLURM, spec.dataset))).toBe(true);
  });

  it('panta.sbatch: a failed node does not end the job (--no-kill for the job and its node step)', () => {
    const text = read(`${SLURM}/panta.sbatch`);
    expect(text).toMatch(/^#SBATCH --no-kill\b/m);
    expect(text).toMatch(/^\s*srun [^\n]*--no-kill/m);
  });

  it("panta.sbatch: its default layout holds the example's 72B judge, and its preflight refuses one that cannot, in one line, before anything starts", () => {
    const text = read(`${SLURM}/panta.sbatch`);
    const gpus = Number(/^#SBATCH --gres=gpu:(\d+)/m.exec(text)![1]);
    const judgeGpus = Number(/JUDGE_GPUS="\$\{JUDGE_GPUS:-(\d+)\}"/.exec(text)![1]);
    expect(/JUDGE_MODEL="\$\{JUDGE_MODEL:-([^}]+)\}"/.exec(text)![1]).toBe((EXAMPLE.judge as { backend: { model: string } }).backend.model);
    expect(judgeGpus).toBeLessThan(gpus); // GPUs left for the agents on the head node
    const check = (env: Record<string, string>) =>
      spawnSync('bash', [join(ROOT, SLURM, 'panta.sbatch'), '--check'], {
        cwd: tempDir('panta-preflight-'),
        env: {
          PATH: process.env.PATH!,
          HOME: '/tmp',
          CUDA_VISIBLE_DEVICES: [...Array(gpus).keys()].join(','),
          GPU_MEMORY_GB: '80',
          ...env,
        },
        encoding: 'utf8',
        timeout: 20_000,
      });
    const ok = check({});
    expect(ok.stderr.trim()).toBe('panta.sbatch: preflight passed');
    expect(ok.status).toBe(0);
    // ~145 GB of BF16 weights on one GPU of 80 GB, or every GPU of the head node for the judge: refused at once
    for (const [env, names] of [
      [{ JUDGE_GPUS: '1' }, /JUDGE_GPUS=1 .*Qwen2\.5-72B-Instruct|Qwen2\.5-72B-Instruct.*JUDGE_GPUS=1/],
      [{ JUDGE_GPUS: String(gpus) }, new RegExp(`JUDGE_GPUS=${gpus} .*none for the agents`)],
      [{ JUDGE_GPUS: '3' }, /JUDGE_GPUS=3: .*tensor parallelism/],
    ] as const) {
      const bad = check(env);
      expect(bad.status, JSON.stringify(env)).toBe(2);
      const lines = bad.stderr.trim().split('\n');
      expect(lines, JSON.stringify(env)).toHaveLength(1);
      expect(lines[0]).toMatch(names);
    }
    // a 4-bit judge fits one GPU
    expect(check({ JUDGE_GPUS: '1', JUDGE_MODEL: 'Qwen/Qwen2.5-72B-Instruct-AWQ' }).status).toBe(0);
  });

  it('panta.sbatch: srun passes --cpus-per-task, Redis keeps its AOF on node-local disk with maxmemory and a password (checked on a real redis-server)', async () => {
    const text = read(`${SLURM}/panta.sbatch`);
    expect(text).toMatch(/^\s*srun .*--cpus-per-task="\$\{SLURM_CPUS_PER_TASK:-1\}"/m);
    expect(text).toMatch(/^#SBATCH --signal=B:TERM@\d+/m);
    // vLLM reads VLLM_PORT as the base of its own ports: Panta's settings must not set it
    for (const s of SCRIPTS) expect(read(`${SLURM}/${s}`), s).not.toMatch(/\bVLLM_PORT=|\$\{?VLLM_PORT\b/);
    const conf = /cat > "\$redis_conf" <<EOF\n([\s\S]*?)\nEOF\n/.exec(text)![1].split('\n');
    expect(conf).toContain('dir $REDIS_DIR');
    expect(text).toMatch(/REDIS_DIR="\$\{REDIS_DIR:-\$\{TMPDIR:-\/tmp\}\//);
    expect(conf).toContain('requirepass $redis_password');
    const settings = conf
      .filter((l) => /^(appendonly|appendfsync|auto-aof-rewrite-percentage|auto-aof-rewrite-min-size|maxmemory|maxmemory-policy) /.test(l))
      .map((l) => l.replace('$REDIS_MAXMEMORY', /REDIS_MAXMEMORY:-(\w+)/.exec(text)![1]));
    const dir = tempDir('panta-redis-conf-');
    writeFileSync(join(dir, 'redis.conf'), `${settings.join('\n')}\nrequirepass job-pass\n`);
    expectRedisConfig(await liveRedisConfig([join(dir, 'redis.conf')], 'job-pass'), 64 * 1024 ** 3); // GPU nodes hold far more
  });
});

// ---- the Slurm scripts run here --------------------------------------------------------------------------------
// Under a real slurmctld and slurmd on this machine (test/slurm-cluster.ts: Debian's slurm-wlm and munge, run as
// root; .ci/run installs them) with `sbatch --wait`, the script's own #SBATCH lines overridden on the command
// line only where one node of fake GPUs cannot give them (--nodes, --gres, --cpus-per-task); elsewhere the
// scripts run under bash with srun and scontrol stubbed. Either way vLLM is played by panta serve-surrogate,
// through the scripts' own override (VLLM=...). Under the real Slurm, panta.sbatch's node step is killed mid-sweep
// (scancel --signal=KILL JOB.0: node.sh, its vLLM and its worker) and the job starts it again on its node (one
// node here: the step of the only node is the one killed). Not run: two nodes, one of which dies while the other
// serves. Two slurmd do run on this host (`slurmd -N NAME` with a Port= each), but both nodes' node.sh start the
// agents' vLLM at the same LLM_PORT on the one host, so the second node cannot serve beside the first.
const SLURM_MISSING = slurmMissing();

/** Stubs: srun runs its command on this machine and scontrol names it (bin/, on PATH only where no real Slurm
 * runs); vllm (given as VLLM) records its call and serves the surrogate on the port it is given. */
function slurmStubs(): { bin: string; vllm: string; calls: string } {
  const dir = tempDir('panta-slurm-');
  const bin = join(dir, 'bin');
  const calls = join(dir, 'calls');
  mkdirSync(bin);
  mkdirSync(calls);
  const stub = (file: string, body: string) => {
    writeFileSync(file, `#!/bin/bash\n${body}\n`);
    chmodSync(file, 0o755);
  };
  stub(join(bin, 'scontrol'), 'hostname -s');
  stub(
    join(bin, 'srun'),
    `printf '%s\\n' "$*" >> "${calls}/srun"
out=""
while [[ $1 == --* ]]; do case $1 in --output=*) out="\${1#--output=}";; esac; shift; done
exec "$@" > "\${out//%N/$(hostname -s)}" 2>&1`,
  );
  stub(
    join(dir, 'vllm'),
    `printf 'cuda=%s batch_invariant=%s vllm_port=%s step=%s cpus=%s args=%s\\n' "$CUDA_VISIBLE_DEVICES" "$VLLM_BATCH_INVARIANT" "\${VLLM_PORT-unset}" "\${SLURM_STEP_ID-none}" "\${SLURM_CPUS_PER_TASK-}" "$*" >> "${calls}/vllm"
args=("$@"); port=""
for ((i = 0; i < \${#args[@]}; i++)); do [[ \${args[$i]} == --port ]] && port=\${args[$((i + 1))]}; done
latency=0; [[ $port == "\${LLM_PORT-}" ]] && latency=\${AGENT_LATENCY_MS:-0} # the agents' server may answer slowly
exec "$NODE" "${ROOT}/packages/cli/bin/panta.js" serve-surrogate --host 0.0.0.0 --port "$port" --dataset "${RHEON6}" --latency-ms "$latency"`,
  );
  return { bin, vllm: join(dir, 'vllm'), calls };
}

function tinySpec(dir: string): string {
  const backend =
    '{kind: openai, base_url: "http://127.0.0.1:8000/v1", model: surrogate-potts-v1, api_key_env: VLLM_API_KEY, timeout_ms: 5000}';
  const file = join(dir, 'tiny.yaml');
  writeFileSync(
    file,
    `name: tiny\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [8]\ntemperatures: [0.4, 1.2]\nsweeps: 2\nseed: 11\nconcurrency: 2\nencoders: [{name: hashing, kind: hashing, dim: 32}]\nbackend: ${backend}\njudge: {kind: llm, backend: ${backend}}\nout: ${join(dir, 'corpus')}\n`,
  );
  return file;
}

/** The same sweep run embedded (`runSweep`, one process) against a surrogate server: the corpus the jobs must equal. */
async function embeddedCorpus(spec: string): Promise<string> {
  const dir = tempDir('panta-slurm-embedded-');
  const server = await startSurrogateServer({ prompts: parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6) });
  try {
    const copy = join(dir, 'tiny.yaml');
    writeFileSync(
      copy,
      readFileSync(spec, 'utf8').replaceAll('http://127.0.0.1:8000/v1', `${server.url}/v1`).replaceAll(', api_key_env: VLLM_API_KEY', ''),
    );
    const out = join(dir, 'corpus');
    expect((await runSweep(copy, { out, logLevel: 'silent' })).status).toBe('complete');
    return out;
  } finally {
    await server.close();
  }
}

function runScript(script: string, env: Record<string, string>, timeout = 240_000): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(ROOT, SLURM, script)], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeout);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

const baseEnv = (path: string): Record<string, string> => ({
  PATH: path,
  HOME: process.env.HOME ?? '/tmp',
  NODE: process.execPath,
  PANTA_HOME: ROOT,
  VLLM_API_KEY: 'EMPTY',
});

describe.skipIf(!has('redis-server', ['--version']))(
  SLURM_MISSING
    ? `deploy/slurm run on this machine (srun and scontrol stubbed: no real Slurm here, ${SLURM_MISSING})`
    : 'deploy/slurm run by sbatch on a real slurmctld and slurmd on this machine',
  () => {
    let slurm: Slurm | undefined;
    let embedded: Promise<string> | undefined;
    beforeAll(async () => {
      if (!SLURM_MISSING) slurm = await startSlurm();
    }, 120_000);
    afterAll(() => slurm?.stop());
    const expectEmbedded = async (spec: string, corpus: string) => {
      embedded ??= embeddedCorpus(spec);
      expect(await corpusDiff(corpus, await embedded)).toEqual({ extra: 0, missing: 0 });
    };

    /** One job: `sbatch --wait ARGS --output=OUT` where Slurm runs, else the script under bash with the stub's SLURM_* variables. */
    async function submit(
      script: string,
      env: Record<string, string>,
      args: { sbatch: string[]; stub: Record<string, string>; output: string; during?: (id: string) => Promise<void> },
    ): Promise<{ code: number | null; stderr: string }> {
      if (!slurm) return runScript(script, { ...env, ...args.stub });
      const code = await slurm.sbatch(join(ROOT, SLURM, script), [...args.sbatch, `--output=${args.output}`], env, ROOT, args.during);
      return { code, stderr: existsSync(args.output) ? readFileSync(args.output, 'utf8') : '' };
    }

    it('panta.sbatch: the sweep completes on a judge server of its own, a GPU batch in flight per worker, the password is in no log, and Redis is saved for the next job, which resumes from it; the corpus is the embedded run', {
      timeout: 600_000,
    }, async () => {
      const { bin, vllm, calls } = slurmStubs();
      const dir = dirname(bin);
      const spec = tinySpec(dir);
      const path = slurm ? process.env.PATH! : `${bin}:${process.env.PATH}`;
      const host = spawnSync('hostname', ['-s'], { encoding: 'utf8' }).stdout.trim();
      const job = async (name: string, kill = false) => {
        // ports (Redis, judge, one agents' server) free here
        let base = 20000 + Math.floor(Math.random() * 2000) * 16;
        while (!(await portsFree(base, 3))) base = 20000 + Math.floor(Math.random() * 2000) * 16;
        const env = {
          ...baseEnv(path),
          VLLM: vllm,
          PORT_BASE: String(base),
          JUDGE_GPUS: '1',
          JUDGE_MODEL: 'the-judge-model',
          LLM_MAX_NUM_SEQS: '8',
          COLLECTORS: '2',
          SPEC: spec,
          LOG_DIR: join(dir, `logs-${name}`),
          TMPDIR: join(dir, 'node-local'),
          REDIS_SAVE_DIR: join(dir, 'redis-save'),
          PANTA_REDIS_URL: '',
          // the run with a kill: the agents' answers take 50 ms, so the sweep is under way when its node's step
          // is killed, and the killed worker's events come back to the queue after 2 s instead of 30
          ...(kill ? { AGENT_LATENCY_MS: '50', WORKER_LOCK_MS: '2000' } : {}),
        };
        const stub = {
          SLURM_JOB_ID: String(base),
          SLURM_JOB_NODELIST: 'stub',
          SLURM_JOB_NUM_NODES: '1',
          SLURM_CPUS_PER_TASK: '2',
          CUDA_VISIBLE_DEVICES: '0,1',
        };
        const sbatch = ['--nodes=1', '--gres=gpu:2', '--cpus-per-task=2'];
        // --no-kill: once the worker has taken the sweep's first events, the node's step (node.sh, its vLLM
        // servers and worker) is killed with SIGKILL; the job starts the step again and the sweep completes.
        const during = async (id: string) => {
          const workerLog = join(env.LOG_DIR, `worker-${host}-${base + 2}.log`);
          for (let i = 0; i < 1200 && !(existsSync(workerLog) && readFileSync(workerLog, 'utf8').includes('"msg":"sweep loaded"')); i++)
            await sleep(50);
          const killed = spawnSync('scancel', ['--signal=KILL', `${id}.0`], { env: { ...process.env, ...slurm!.env }, encoding: 'utf8' });
          expect(killed.status, killed.stderr).toBe(0);
        };
        const output = join(dir, `${name}.out`);
        return { base, logs: env.LOG_DIR, ...(await submit('panta.sbatch', env, { sbatch, stub, output, ...(kill ? { during } : {}) })) };
      };
      mkdirSync(join(dir, 'node-local'));
      const first = await job('first', !!slurm);
      // On failure the roles' own logs say why (the harness's folder is gone once the test ends).
      expect(first.stderr, `${first.stderr}\n${logTails(first.logs)}`).toContain('sweep complete');
      expect(first.code, first.stderr).toBe(0);
      expect((await pantaInProcess(['verify', join(dir, 'corpus')])).code).toBe(0);
      await expectEmbedded(spec, join(dir, 'corpus'));
      // srun gave node.sh the job's CPUs (a real job step, step 0, where Slurm runs); vLLM ran batch-invariant,
      // without VLLM_PORT, the judge alone on GPU 0 (Slurm's CUDA_VISIBLE_DEVICES from --gres=gpu:2)
      if (!slurm) expect(readFileSync(join(calls, 'srun'), 'utf8')).toContain('--cpus-per-task=2');
      const { base, logs } = first;
      const started = readFileSync(join(calls, 'vllm'), 'utf8').trim().split('\n');
      // the killed step (step 0) was started again as step 1, with the same servers; the sweep was under way
      const servers = started.slice(0, 2);
      if (slurm) {
        expect(first.stderr).toMatch(
          new RegExp(`the step on ${host} ended \\(exit \\d+\\) before the sweep: starting it again \\(1 of 3\\)`),
        );
        expect(
          started
            .slice(2)
            .map((l) => /step=(\S+) .*--port (\d+)/.exec(l)!.slice(1))
            .sort(),
        ).toEqual(
          [
            ['1', String(first.base + 1)],
            ['1', String(first.base + 2)],
          ].sort(),
        );
        expect(
          readFileSync(join(first.logs, `worker-${host}-${first.base + 2}.log`), 'utf8').match(/"msg":"worker started"/g),
        ).toHaveLength(2);
      } else expect(started).toHaveLength(2);
      expect(servers.map((l) => /cuda=(\S*) .*--port (\d+)/.exec(l)!.slice(1)).sort()).toEqual(
        [
          ['0', String(base + 1)],
          ['1', String(base + 2)],
        ].sort(),
      );
      for (const l of servers) expect(l).toMatch(new RegExp(`batch_invariant=1 vllm_port=unset step=${slurm ? '0' : 'none'} cpus=2 `));
      // the judge's server serves the judge's own model (JUDGE_MODEL), the agents' server the agents'
      expect(servers.find((l) => l.includes(`--port ${base + 1} `))).toContain('args=serve the-judge-model ');
      expect(servers.find((l) => l.includes(`--port ${base + 2} `))).toContain('args=serve Qwen/Qwen3-14B ');
      // one worker per agents' server holding the server's batch, and the scheduler follows its slots
      expect(readFileSync(join(logs, 'scheduler.log'), 'utf8')).toMatch(/"concurrency":9,"workers":1,"slots":8/);
      // two collectors, a run each: the second wrote its run and ended, the first finished the corpus
      expect(readFileSync(join(logs, 'collector-2.log'), 'utf8')).toContain('"msg":"run finished"');
      expect(readFileSync(join(logs, 'collector.log'), 'utf8')).toContain('"msg":"corpus finished"');
      // the orderly stop reached the workers (srun would have killed them with its step): node.sh stopped them,
      // each after the calls it held, then vLLM
      expect(readFileSync(join(logs, `node-${host}.log`), 'utf8')).toContain('workers stopped; stopping vLLM');
      expect(readFileSync(join(logs, `worker-${host}-${base + 2}.log`), 'utf8')).toContain('"msg":"worker stopped"');
      expect(readFileSync(join(logs, `worker-${host}-${base + 2}.log`), 'utf8').length).toBeGreaterThan(0);
      // the password: in the two mode-600 files only, never in a log or on the job's output
      const password = /redis:\/\/:([0-9a-f]+)@/.exec(readFileSync(join(logs, 'redis.url'), 'utf8'))![1];
      expect(statSync(join(logs, 'redis.url')).mode & 0o077).toBe(0);
      for (const f of readdirSync(logs).filter((f) => !['redis.url', 'redis.conf'].includes(f)))
        expect(readFileSync(join(logs, f), 'utf8'), f).not.toContain(password);
      expect(first.stderr).not.toContain(password);
      // Redis ran on node-local disk, and its AOF was saved at the orderly stop
      expect(readdirSync(join(dir, 'node-local'))).toEqual([]);
      expect(existsSync(join(dir, 'redis-save', 'complete'))).toBe(true);
      expect(readdirSync(join(dir, 'redis-save', 'appendonlydir')).length).toBeGreaterThan(0);

      // the next job starts Redis from that copy and finds the sweep complete
      const second = await job('second');
      expect(second.stderr).toContain('Redis starts from the state the last job saved');
      expect(second.code, second.stderr).toBe(0);
      expect((await pantaInProcess(['verify', join(dir, 'corpus')])).code).toBe(0);
    });

    it('panta-array.sbatch then panta-merge.sbatch: two shards on vLLM servers at free ports, merged into a corpus that verifies and is the embedded run', {
      timeout: 600_000,
    }, async () => {
      const { bin, vllm, calls } = slurmStubs();
      const dir = dirname(bin);
      const spec = tinySpec(dir);
      const parts = join(dir, 'parts');
      const env = {
        ...baseEnv(slurm ? process.env.PATH! : `${bin}:${process.env.PATH}`),
        VLLM: vllm,
        SPEC: spec,
        SHARDS: '2',
        PARTS_DIR: parts,
      };
      if (slurm) {
        // one array job of two tasks, side by side on the node's fake GPUs
        const code = await slurm.sbatch(
          join(ROOT, SLURM, 'panta-array.sbatch'),
          ['--array=1-2', `--output=${dir}/array-%a.out`],
          { ...env, LLM_MAX_NUM_SEQS: '8' },
          ROOT,
        );
        for (const index of [1, 2]) expect(readFileSync(join(dir, `array-${index}.out`), 'utf8')).toContain(`part ${index} of 2 complete`);
        expect(code).toBe(0);
      } else {
        for (const index of [1, 2]) {
          const r = await runScript('panta-array.sbatch', {
            ...env,
            SLURM_ARRAY_JOB_ID: '77',
            SLURM_ARRAY_TASK_ID: String(index),
            LLM_MAX_NUM_SEQS: '8',
          });
          expect(r.stderr).toContain(`part ${index} of 2 complete`);
          expect(r.code, r.stderr).toBe(0);
        }
      }
      // each task's spec copy pointed at its own server and is gone
      expect(readdirSync(dir).filter((f) => f.startsWith('.tiny.task-'))).toEqual([]);
      const ports = readFileSync(join(calls, 'vllm'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => /--port (\d+)/.exec(l)![1]);
      expect(ports).toHaveLength(2);
      expect(ports.every((p) => p !== '8000')).toBe(true);
      // an index beyond SHARDS is refused in one line, exit 2
      const bad = await submit('panta-array.sbatch', env, {
        sbatch: ['--array=3'],
        stub: { SLURM_ARRAY_TASK_ID: '3' },
        output: join(dir, 'bad.out'),
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      const out = join(dir, 'merged');
      const merged = await submit('panta-merge.sbatch', { ...env, OUT: out }, { sbatch: [], stub: {}, output: join(dir, 'merge.out') });
      expect(merged.code, merged.stderr).toBe(0);
      expect((await pantaInProcess(['verify', out])).code).toBe(0);
      await expectEmbedded(spec, out);
    });
  },
);

// ---- against the CLI ------------------------------------------------------------------------------------------
// Skipped while a command is not in the CLI (the contract above is then the reference); once it is, its --help
// must list every flag that a deployment file passes. The CLI runs in this process (its help is the sources'
// commander program, which the bundle is built from).
const cliHelp = (await pantaInProcess(['--help'])).stdout;
describe('the CLI agrees with the deployment files', () => {
  for (const role of Object.keys(CONTRACT)) {
    it.skipIf(!new RegExp(`^ {2}${role}( |$)`, 'm').test(cliHelp))(
      `panta ${role} --help lists every flag the deployment files use`,
      async () => {
        const help = await pantaInProcess([role, '--help']);
        expect(help.code).toBe(0);
        for (const flag of CONTRACT[role].flags) expect(help.stdout, `panta ${role} --help`).toContain(flag);
      },
    );
  }
});
