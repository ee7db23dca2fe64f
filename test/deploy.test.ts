import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
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
import { afterAll, describe, expect, it } from 'vitest';
import { parseSweepSpec } from '@panta/core';
import { ROOT, panta, tempDir } from './helpers.js';
import { freePort } from './redis-server.js';

// The deployment files (deploy/, docker-compose.yml) checked as far as a machine without Docker, Kubernetes or
// Slurm allows: the Compose file against the official Compose Specification schema, every Kubernetes object
// against the API's schema, every panta command line against the distributed roles' contract, Redis's
// durability settings on a real redis-server, the Slurm scripts with `bash -n`.

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
type Obj = Record<string, any>;

// ---- the distributed roles' command lines (README: Run on a cluster; DESIGN.md section 3) --------------------
const CONTRACT: Record<string, { positionals: number; flags: string[] }> = {
  scheduler: { positionals: 1, flags: ['--redis', '--out', '--concurrency', '--seed'] },
  worker: { positionals: 0, flags: ['--redis', '--concurrency', '--base-url'] },
  collector: { positionals: 0, flags: ['--redis', '--out', '--base-url'] },
  status: { positionals: 0, flags: ['--redis'] },
  dashboard: { positionals: 0, flags: ['--redis', '--port', '--host', '--allowed-hosts'] },
};

/** Checks `panta ARGS` against the contract (every flag takes a value) and returns what it passes. */
function checkInvocation(argv: string[], where: string): { role: string; flags: Map<string, string>; positionals: string[] } {
  const [role, ...rest] = argv;
  const contract = CONTRACT[role!];
  if (!contract) throw new Error(`${where}: "${role}" is not a distributed role of panta (${Object.keys(CONTRACT).join(', ')})`);
  const flags = new Map<string, string>();
  const positionals: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a.startsWith('-')) {
      if (!contract.flags.includes(a)) throw new Error(`${where}: panta ${role} takes no ${a} (it takes ${contract.flags.join(', ')})`);
      const value = rest[++i];
      if (value === undefined || value === '' || value.startsWith('--')) throw new Error(`${where}: ${a} has no value`);
      if (flags.has(a)) throw new Error(`${where}: ${a} given twice`);
      flags.set(a, value);
    } else positionals.push(a);
  }
  if (positionals.length !== contract.positionals) throw new Error(`${where}: panta ${role} takes ${contract.positionals} argument(s), got ${JSON.stringify(positionals)}`);
  return { role: role!, flags, positionals };
}

/** Compose's interpolation with an empty environment: ${VAR:-default}, ${VAR-default}, ${VAR}, $VAR, $$. */
function interpolate<T>(value: T, env: Record<string, string> = {}): T {
  if (typeof value === 'string') {
    return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, name, op, arg, bare) => {
      if (m === '$$') return '$';
      if (bare) return env[bare] ?? '';
      const v = env[name];
      if (op === ':-') return v ? v : arg;
      if (op === '-') return v ?? arg;
      if (op === ':?' || op === '?') {
        if (v === undefined || (op === ':?' && v === '')) throw new Error(`\${${name}} is required: ${arg}`);
        return v;
      }
      return v ?? '';
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)])) as T;
  return value;
}

/** Compose durations (1m30s, 5m, 300s, 2h) in seconds. */
function seconds(duration: string): number {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)/g)) total += Number(n) * { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, ns: 1e-9 }[unit as 'h']!;
  return total;
}

/** The example spec's per-attempt timeout: a worker's grace period must outlast one attempt. */
const EXAMPLE_TIMEOUT_S = (parseSweepSpec(read('examples/eraclitus.yaml'), 'eraclitus.yaml').backend as { timeout_ms: number }).timeout_ms / 1000;

// ---- a real redis-server, started with the deployment's own arguments ---------------------------------------
const servers: { kill: () => void }[] = [];
afterAll(() => servers.forEach((s) => s.kill()));

/** One inline command, one reply, parsed just enough for CONFIG GET (an array of bulk strings). */
function redisCommand(port: number, command: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('redis did not answer')));
    socket.on('data', (d) => {
      data += d.toString();
      const lines = data.split('\r\n');
      const count = Number(/^\*(\d+)/.exec(lines[0]!)?.[1]);
      const values = lines.slice(1).filter((_, i) => i % 2 === 1);
      if (!Number.isNaN(count) && values.length >= count) {
        socket.end();
        resolve(values.slice(0, count));
      }
      if (data.startsWith('-')) reject(new Error(data.trim()));
    });
    socket.once('error', reject);
    socket.write(`${command}\r\n`);
  });
}

/** Starts redis-server with `args` (the deployment's own, port and folder aside) and returns its effective config. */
async function liveRedisConfig(args: string[]): Promise<Record<string, string>> {
  const port = await freePort();
  const dir = tempDir('panta-redis-');
  const child = spawn('redis-server', [...args, '--port', String(port), '--bind', '127.0.0.1', '--dir', dir], { stdio: 'ignore' });
  servers.push({ kill: () => child.kill('SIGKILL') });
  for (let i = 0; ; i++) {
    try {
      const reply = await redisCommand(port, 'CONFIG GET *');
      const config: Record<string, string> = {};
      for (let j = 0; j < reply.length; j += 2) config[reply[j]!] = reply[j + 1]!;
      child.kill('SIGTERM');
      return config;
    } catch (e) {
      if (i > 100 || child.exitCode !== null) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function expectDurableRedisConfig(config: Record<string, string>): void {
  expect(config).toMatchObject({ appendonly: 'yes', appendfsync: 'always', 'maxmemory-policy': 'noeviction' });
}

// ---- docker-compose.yml ---------------------------------------------------------------------------------------
const composeText = read('docker-compose.yml');
const compose = interpolate(parse(composeText, { merge: true }) as Obj);
const services = compose.services as Record<string, Obj>;
const PANTA_SERVICES = ['scheduler', 'worker', 'collector', 'dashboard'];

describe('docker-compose.yml', () => {
  it('is valid against the official Compose Specification schema (as vendored by dclint)', () => {
    const schemaFile = join(dirname(createRequire(import.meta.url).resolve('dclint/package.json')), 'schemas', 'compose.schema.json');
    const { $schema, ...schema } = JSON.parse(readFileSync(schemaFile, 'utf8'));
    expect(schema.title).toBe('Compose Specification');
    // draft-07, named by an https URL that Ajv does not know by that name: Ajv's own draft-07 checks the schema
    expect($schema).toMatch(/json-schema\.org\/draft-07\/schema/);
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    const ok = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 1)).toEqual([]);
    expect(ok).toBe(true);
    // the schema is strict: a misspelt key is refused, so the check above means something
    const typo = structuredClone(compose);
    typo.services.worker.restrat = 'always';
    expect(validate(typo)).toBe(false);
  });

  it('has the services of the distributed mode; every dependency exists', () => {
    expect(Object.keys(services).sort()).toEqual(['collector', 'dashboard', 'redis', 'scheduler', 'vllm', 'worker']);
    for (const [name, svc] of Object.entries(services)) {
      for (const dep of Object.keys(svc.depends_on ?? {})) expect(services, `${name} depends on ${dep}`).toHaveProperty(dep);
    }
    for (const name of ['scheduler', 'worker', 'collector', 'dashboard']) {
      expect(services[name]!.depends_on.redis.condition, name).toBe('service_healthy');
    }
  });

  it('redis: AOF with appendfsync always and noeviction on a volume, with a healthcheck (checked on a real redis-server)', async () => {
    const redis = services.redis!;
    expect(redis.image).toMatch(/^redis:7/);
    expect(redis.command[0]).toBe('redis-server');
    expect(redis.volumes).toContainEqual(expect.stringMatching(/^redis-data:\/data$/));
    expect(compose.volumes).toHaveProperty('redis-data');
    expect(redis.healthcheck.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expectDurableRedisConfig(await liveRedisConfig(redis.command.slice(1)));
  });

  it('every panta service runs a distributed role with flags of the contract, from the panta image', () => {
    for (const name of PANTA_SERVICES) {
      const svc = services[name]!;
      expect(svc.build, name).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile' });
      expect(svc.image, name).toBe('panta:latest');
      const call = checkInvocation(svc.command, `docker-compose.yml services.${name}.command`);
      expect(call.role, name).toBe(name);
      expect(call.flags.get('--redis'), name).toBe('redis://redis:6379');
      expect(svc.environment.PANTA_REDIS_URL, name).toBe('redis://redis:6379');
      expect(svc.init, name).toBe(true);
    }
    // the default spec is in the repository (and so at /app/examples in the image)
    expect(existsSync(join(ROOT, checkInvocation(services.scheduler!.command, 'scheduler').positionals[0]!))).toBe(true);
    // the workers call the vllm service unless told otherwise
    expect(checkInvocation(services.worker!.command, 'worker').flags.get('--base-url')).toBe('http://vllm:8000/v1');
  });

  it('the example spec can run: its api_key_env is set, its encoder folders are mounted at /models', () => {
    const spec = parseSweepSpec(read('examples/eraclitus.yaml'), 'eraclitus.yaml');
    const keyEnv = (spec.backend as { api_key_env?: string }).api_key_env!;
    const paths = spec.encoders.flatMap((e) => ('path' in e && e.path ? [String(e.path)] : []));
    expect(paths.length).toBeGreaterThan(0);
    for (const name of ['scheduler', 'worker', 'collector']) {
      const svc = services[name]!;
      expect(svc.environment[keyEnv], `${name} ${keyEnv}`).toMatch(/\S/);
      const mounts = (svc.volumes as string[]).map((v) => v.split(':')[1]);
      for (const p of paths) expect(mounts.some((m) => p.startsWith(`${m}/`)), `${name} mounts ${p}`).toBe(true);
    }
    expect(services.vllm!.environment[keyEnv]).toBe(services.worker!.environment[keyEnv]);
  });

  it('worker scales: no container_name, no host port, restarts unless stopped, a grace period past one LLM call', () => {
    const worker = services.worker!;
    expect(worker).not.toHaveProperty('container_name');
    expect(worker).not.toHaveProperty('ports');
    expect(worker.restart).toBe('unless-stopped');
    expect(seconds(worker.stop_grace_period)).toBeGreaterThan(EXAMPLE_TIMEOUT_S);
    // vllm is optional for the workers: the gpu profile may be off when another endpoint serves them
    expect(worker.depends_on.vllm).toEqual({ condition: 'service_healthy', required: false });
    for (const svc of Object.values(services)) expect(svc).not.toHaveProperty('container_name');
  });

  it('scheduler and collector restart only on failure (they exit 0 when done); the collector writes to a volume', () => {
    expect(services.scheduler!.restart).toBe('on-failure');
    expect(services.collector!.restart).toBe('on-failure');
    const corpus = (services.collector!.volumes as string[]).find((v) => v.split(':')[1] === '/app/runs');
    expect(corpus).toBeDefined();
    expect(compose.volumes).toHaveProperty(corpus!.split(':')[0]!);
    // the example's relative out lands on that volume (the image's working directory is /app)
    expect(parseSweepSpec(read('examples/eraclitus.yaml'), 'eraclitus.yaml').out).toMatch(/^runs\//);
  });

  it('vllm: gpu profile, the model from MODEL (Qwen/Qwen3-14B), --max-num-seqs, a GPU reservation, /health, an HF cache volume', () => {
    const vllm = services.vllm!;
    expect(vllm.profiles).toEqual(['gpu']);
    expect(vllm.image).toMatch(/^vllm\/vllm-openai:/);
    const raw = (parse(composeText) as Obj).services.vllm.command as string[];
    expect(raw[raw.indexOf('--model') + 1]).toBe('${MODEL:-Qwen/Qwen3-14B}');
    expect(interpolate(raw, { MODEL: 'Qwen/Qwen3-8B' })[raw.indexOf('--model') + 1]).toBe('Qwen/Qwen3-8B');
    expect(Number(vllm.command[vllm.command.indexOf('--max-num-seqs') + 1])).toBeGreaterThan(0);
    expect(vllm.command[vllm.command.indexOf('--port') + 1]).toBe('8000');
    expect(vllm.deploy.resources.reservations.devices).toContainEqual(expect.objectContaining({ driver: 'nvidia', capabilities: ['gpu'] }));
    expect(vllm.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8000/health');
    expect(vllm.volumes).toContain('hf-cache:/root/.cache/huggingface');
  });

  it('dashboard: port 8080 bound to 127.0.0.1 on the host only', () => {
    const d = services.dashboard!;
    const call = checkInvocation(d.command, 'dashboard');
    expect(call.flags.get('--port')).toBe('8080');
    expect(call.flags.get('--allowed-hosts')).toBe('dashboard'); // a Prometheus on the compose network scrapes dashboard:8080
    expect(d.ports).toEqual(['127.0.0.1:8080:8080']);
    for (const [name, svc] of Object.entries(services)) {
      for (const p of svc.ports ?? []) expect(String(p), `${name} publishes ${p} beyond the loopback`).toMatch(/^127\.0\.0\.1:/);
    }
  });
});

// ---- deploy/Dockerfile and .dockerignore ------------------------------------------------------------------------
describe('deploy/Dockerfile', () => {
  const instructions = read('deploy/Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'))
    .map((l) => {
      const [, op, rest] = /^\s*(\w+)\s+(.*)$/.exec(l)!;
      return { op: op!.toUpperCase(), args: rest!.trim() };
    });
  const lastFrom = instructions.map((i) => i.op).lastIndexOf('FROM');
  const final = instructions.slice(lastFrom);

  it('builds on node:20-bookworm-slim with npm ci (CUDA EP of onnxruntime only on request), runs as non-root', () => {
    expect(instructions.find((i) => i.op === 'ARG' && i.args.startsWith('NODE_IMAGE='))!.args).toBe('NODE_IMAGE=node:20-bookworm-slim');
    expect(instructions.filter((i) => i.op === 'FROM').map((i) => i.args.split(/\s+/)[0])).toEqual(['${NODE_IMAGE}', '${NODE_IMAGE}']);
    const install = instructions.find((i) => i.op === 'RUN' && /\bnpm ci\b/.test(i.args))!;
    // npm ci never downloads the CUDA provider (npm 11: allowScripts denies it; older npm: the env var skips it);
    // a GPU build names the provider and runs the install script by hand.
    expect(install.args).toMatch(/ONNXRUNTIME_NODE_INSTALL=skip npm ci/);
    expect(install.args).toMatch(/ONNXRUNTIME_NODE_INSTALL="\$\{ONNXRUNTIME_NODE_INSTALL\}" node script\/install\.js/);
    expect(instructions).toContainEqual({ op: 'ARG', args: 'ONNXRUNTIME_NODE_INSTALL=skip' });
    expect((JSON.parse(read('package.json')) as { allowScripts: Record<string, boolean> }).allowScripts['onnxruntime-node']).toBe(false);
    expect(read('.npmrc')).not.toMatch(/onnxruntime-node-install/); // npm warns on every command about unknown keys
    const user = final.filter((i) => i.op === 'USER').at(-1)!;
    expect(user.args).not.toMatch(/^(root|0)(:|$)/);
    expect(final.find((i) => i.op === 'WORKDIR')!.args).toBe('/app');
  });

  it('its ENTRYPOINT is the panta CLI, at a path that exists in the repository', () => {
    const entry = JSON.parse(final.find((i) => i.op === 'ENTRYPOINT')!.args) as string[];
    const script = entry.find((a) => a.endsWith('.js'))!;
    expect(script).toBe('/app/packages/cli/bin/panta.js');
    expect(existsSync(join(ROOT, script.replace(/^\/app\//, '')))).toBe(true);
    const pkg = JSON.parse(read('packages/cli/package.json')) as { bin: Record<string, string> };
    expect(join('packages/cli', pkg.bin.panta!)).toBe(script.replace(/^\/app\//, ''));
  });

  it('.dockerignore leaves out installs, builds, corpora and git, but not what npm ci and tsc -b need', () => {
    const patterns = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const p of ['.git', '**/node_modules', '**/dist', 'runs/', '**/*.tsbuildinfo']) expect(patterns).toContain(p);
    const needed = ['package.json', 'package-lock.json', '.npmrc', 'tsconfig.json', 'tsconfig.base.json', 'packages/cli/bin/panta.js', 'packages/core/src/index.ts', 'datasets/rheon6.jsonl', 'examples/eraclitus.yaml'];
    const toRegExp = (p: string) => new RegExp(`^${p.replace(/\/$/, '').replace(/[.+^$()|[\]]/g, '\\$&').replace(/\*\*\//g, '(.*/)?').replace(/\*/g, '[^/]*')}(/|$)`);
    for (const file of needed) {
      expect(existsSync(join(ROOT, file)), file).toBe(true);
      expect(patterns.filter((p) => toRegExp(p).test(file)), file).toEqual([]);
    }
  });
});

// ---- deploy/k8s ----------------------------------------------------------------------------------------------------
const K8S = 'deploy/k8s';
const kustomization = parse(read(`${K8S}/kustomization.yaml`)) as Obj;
const manifests: { file: string; doc: Obj }[] = (kustomization.resources as string[]).flatMap((file) =>
  parseAllDocuments(read(`${K8S}/${file}`)).map((d) => {
    expect(d.errors, file).toEqual([]);
    return { file, doc: d.toJS() as Obj };
  }),
);
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
const byKind = (kind: string, name: string) => manifests.find((m) => m.doc.kind === kind && m.doc.metadata.name === name)?.doc;
const podSpec = (o: Obj): Obj => o.spec.template.spec;
const pantaContainers = () =>
  manifests.flatMap(({ file, doc }) => (doc.spec?.template ? (podSpec(doc).containers as Obj[]).filter((c) => c.image === 'panta').map((c) => ({ file, doc, c })) : []));

/** Kubernetes' $(VAR) expansion from the container's own env. */
function expandArgs(c: Obj): string[] {
  const env = Object.fromEntries((c.env ?? []).filter((e: Obj) => 'value' in e).map((e: Obj) => [e.name, e.value]));
  return (c.args as string[]).map((a) => a.replace(/\$\(([A-Z0-9_]+)\)/g, (m, v) => env[v] ?? m));
}

describe('deploy/k8s', () => {
  it('kustomization.yaml lists every manifest in the folder, and the panta image', () => {
    const files = readdirSync(join(ROOT, K8S)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    expect(kustomization.namespace).toBe('panta');
    expect(kustomization.images).toContainEqual(expect.objectContaining({ name: 'panta' }));
  });

  it('every object is valid against the Kubernetes API schema (kubernetes-models)', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(10);
    for (const { file, doc } of manifests) {
      const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
      expect(Model, `${file}: no schema for ${doc.apiVersion} ${doc.kind}`).toBeDefined();
      expect(() => new Model!(doc).validate(), `${file}: ${doc.kind} ${doc.metadata?.name}`).not.toThrow();
    }
    // the validation is real: a wrong type is refused
    const broken = structuredClone(byKind('Deployment', 'panta-worker')!);
    broken.spec.replicas = 'eight';
    expect(() => new Deployment(broken).validate()).toThrow(/replicas/);
  });

  it('selectors match their pod templates; every referenced claim, config map and secret is defined', () => {
    for (const { file, doc } of manifests) {
      if (doc.spec?.selector?.matchLabels) expect(doc.spec.template.metadata.labels, file).toMatchObject(doc.spec.selector.matchLabels);
      if (doc.kind === 'Service') {
        const pods = manifests.filter((m) => m.doc.spec?.template).map((m) => m.doc.spec.template.metadata.labels as Obj);
        expect(pods.some((labels) => Object.entries(doc.spec.selector).every(([k, v]) => labels[k] === v)), `${file}: Service ${doc.metadata.name} selects no pod`).toBe(true);
      }
      if (!doc.spec?.template) continue;
      const pod = podSpec(doc);
      for (const v of pod.volumes ?? []) {
        if (v.persistentVolumeClaim) expect(byKind('PersistentVolumeClaim', v.persistentVolumeClaim.claimName), `${file}: ${v.name}`).toBeDefined();
        if (v.configMap) expect(byKind('ConfigMap', v.configMap.name), `${file}: ${v.name}`).toBeDefined();
      }
      for (const c of pod.containers as Obj[]) {
        for (const m of c.volumeMounts ?? []) expect((pod.volumes ?? []).map((v: Obj) => v.name).concat((doc.spec.volumeClaimTemplates ?? []).map((t: Obj) => t.metadata.name)), `${file}: ${m.name}`).toContain(m.name);
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref && !ref.optional) expect(byKind('Secret', ref.name)?.stringData ?? {}, `${file}: ${e.name}`).toHaveProperty(ref.key);
        }
      }
    }
  });

  it('redis: a StatefulSet with a claim, a headless Service, AOF with appendfsync always and noeviction (checked on a real redis-server)', async () => {
    const sts = byKind('StatefulSet', 'redis')!;
    const svc = byKind('Service', 'redis')!;
    expect(svc.spec.clusterIP).toBe('None');
    expect(sts.spec.serviceName).toBe('redis');
    expect(sts.spec.replicas).toBe(1);
    const [c] = podSpec(sts).containers as Obj[];
    expect(c!.image).toMatch(/^redis:7/);
    expect(c!.volumeMounts).toContainEqual(expect.objectContaining({ mountPath: '/data', name: sts.spec.volumeClaimTemplates[0].metadata.name }));
    expect(c!.args[0]).toBe('redis-server');
    const args = (c!.args as string[]).slice(1);
    const dirAt = args.indexOf('--dir');
    if (dirAt >= 0) args.splice(dirAt, 2); // the test gives its own folder
    expectDurableRedisConfig(await liveRedisConfig(args));
  });

  it('every panta container runs a distributed role with flags of the contract, as the non-root image user', () => {
    const roles = pantaContainers().map(({ file, doc, c }) => {
      const call = checkInvocation(expandArgs(c), `${file}: ${c.name}`);
      expect(call.flags.get('--redis') ?? c.env.find((e: Obj) => e.name === 'PANTA_REDIS_URL')?.value, file).toBe('redis://redis:6379');
      expect(podSpec(doc).securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      return call.role;
    });
    expect(roles.sort()).toEqual(['collector', 'scheduler', 'worker']);
  });

  it('worker: a Deployment with resources and a grace period that outlasts a call in flight; no preStop', () => {
    const worker = byKind('Deployment', 'panta-worker')!;
    expect(worker.spec.replicas).toBeGreaterThan(1);
    const pod = podSpec(worker);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(EXAMPLE_TIMEOUT_S);
    const [c] = pod.containers as Obj[];
    expect(c!.lifecycle?.preStop).toBeUndefined();
    expect(c!.resources.requests).toHaveProperty('cpu');
    expect(c!.resources.requests).toHaveProperty('memory');
    const keyEnv = (parseSweepSpec(read('examples/eraclitus.yaml'), 'x').backend as { api_key_env: string }).api_key_env;
    expect(c!.env.map((e: Obj) => e.name)).toContain(keyEnv);
  });

  it('scheduler and collector: Jobs restarted on failure; the scheduler reads the ConfigMap spec, the collector writes to a claim', () => {
    const scheduler = byKind('Job', 'panta-scheduler')!;
    const collector = byKind('Job', 'panta-collector')!;
    for (const job of [scheduler, collector]) expect(podSpec(job).restartPolicy).toBe('OnFailure');
    const sc = podSpec(scheduler).containers[0] as Obj;
    const specPath = checkInvocation(expandArgs(sc), 'scheduler').positionals[0]!;
    const mount = (sc.volumeMounts as Obj[]).find((m) => specPath.startsWith(`${m.mountPath}/`))!;
    const volume = (podSpec(scheduler).volumes as Obj[]).find((v) => v.name === mount.name)!;
    const cm = byKind('ConfigMap', volume.configMap.name)!;
    const key = specPath.slice(mount.mountPath.length + 1);
    expect(cm.data).toHaveProperty(key);
    // the ConfigMap holds the example sweep, whose dataset resolves to the image's /app/datasets
    expect(parseSweepSpec(cm.data[key], 'sweep.yaml')).toEqual(parseSweepSpec(read('examples/eraclitus.yaml'), 'eraclitus.yaml'));
    expect(mount.mountPath).toBe('/app/spec');
    expect(existsSync(join(ROOT, 'datasets', parse(cm.data[key]).dataset.replace('../datasets/', '')))).toBe(true);
    const cc = podSpec(collector).containers[0] as Obj;
    const corpus = (cc.volumeMounts as Obj[]).find((m) => m.mountPath === '/app/runs')!;
    const claim = (podSpec(collector).volumes as Obj[]).find((v) => v.name === corpus.name)!.persistentVolumeClaim.claimName;
    expect(byKind('PersistentVolumeClaim', claim)!.spec.accessModes).toContain('ReadWriteOnce');
    expect(podSpec(collector).securityContext.fsGroup).toBe(1000);
  });
});

// ---- deploy/slurm --------------------------------------------------------------------------------------------------
describe('deploy/slurm', () => {
  const scripts = readdirSync(join(ROOT, 'deploy/slurm'));

  it('every script passes bash -n', () => {
    expect(scripts.sort()).toEqual(['node.sh', 'panta.sbatch']);
    for (const s of scripts) {
      const r = spawnSync('bash', ['-n', join(ROOT, 'deploy/slurm', s)], { encoding: 'utf8' });
      expect(r.stderr, s).toBe('');
      expect(r.status, s).toBe(0);
    }
  });

  it('every panta command line is a distributed role with flags of the contract, through the repository entry point', () => {
    const roles: string[] = [];
    for (const s of scripts) {
      const text = read(`deploy/slurm/${s}`);
      expect(text, s).toContain('/packages/cli/bin/panta.js"');
      for (const [, line] of text.matchAll(/"\$\{PANTA\[@\]\}" ([^>\n]*)/g)) {
        const argv = line!.replace(/\\$/, '').trim().split(/\s+/).map((a) => a.replace(/^"|"$/g, ''));
        roles.push(checkInvocation(argv, `deploy/slurm/${s}: ${line}`).role);
      }
    }
    expect(roles.sort()).toEqual(['collector', 'scheduler', 'worker']);
    expect(read('deploy/slurm/node.sh')).toMatch(/worker .*--base-url "http:\/\/127\.0\.0\.1:\$2\/v1"/);
  });

  it('panta.sbatch starts Redis with AOF, appendfsync always and noeviction (checked on a real redis-server)', async () => {
    const text = read('deploy/slurm/panta.sbatch');
    const conf = /cat > "\$redis_conf" <<EOF\n([\s\S]*?)\nEOF\n/.exec(text)![1]!.split('\n');
    const durable = conf.filter((l) => /^(appendonly|appendfsync|maxmemory-policy) /.test(l));
    expect(durable).toHaveLength(3);
    const dir = tempDir('panta-redis-conf-');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'redis.conf'), `${durable.join('\n')}\n`);
    expectDurableRedisConfig(await liveRedisConfig([join(dir, 'redis.conf')]));
    expect(text).toMatch(/^#SBATCH --signal=B:TERM@\d+/m);
    expect(text).toContain('deploy/slurm/node.sh');
  });
});

// ---- against the built CLI, once it has the roles ----------------------------------------------------------------
// Skipped while a role is not in the build (the contract above is then the reference); once it is, its --help
// must list every flag that a deployment file passes.
const cliHelp = panta(['--help']).stdout ?? '';
describe('the built CLI agrees with the deployment files', () => {
  for (const role of Object.keys(CONTRACT)) {
    it.skipIf(!new RegExp(`^ {2}${role}( |$)`, 'm').test(cliHelp))(`panta ${role} --help lists every flag the deployment files use`, () => {
      const help = panta([role, '--help']).stdout;
      for (const flag of CONTRACT[role]!.flags) expect(help, `panta ${role} --help`).toContain(flag);
    });
  }
});
