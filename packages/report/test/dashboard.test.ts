import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostAllowed, startDashboard, type DashboardState, type CurvesView } from '@panta/report';
import { RHEON6, panta, pantaAsync, pantaInProcess, pantaProcess, tempDir, writeSpec, type PantaProcess } from '../../../test/helpers.js';
import { RedisServer, freePort } from '../../../test/redis-server.js';
import { expositionProblems, parseExposition, sampleValue } from './prometheus-text.js';

// Slow enough to watch: 2 geometries x 2 temperatures x 3 trials = 12 runs of 16 x 5 = 80 events, 960 in all,
// at 80 ms a call (surrogate latency_ms) with 4 in flight (embedded) or 6 (two workers of 3): 15 to 25 s.
const spec = (name: string, latency: number, concurrency: number) => `
name: ${name}
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring, torus2d]
sizes: [16]
temperatures: [0.3, 1.0]
trials: 3
sweeps: 4
seed: 5
backend: {kind: surrogate, latency_ms: ${latency}}
concurrency: ${concurrency}
`;
const EVENTS = 960;

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) {
  console.warn(
    `dashboard.test.ts: ${CHROMIUM} is missing, so the headless-browser test is skipped; to run it, install Debian's chromium (as root: apt-get install -y chromium), as .ci/run does in CI`,
  );
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

const getText = async (url: string) => {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return { text: await r.text(), type: r.headers.get('content-type') ?? '' };
};
const getState = async (base: string) => JSON.parse((await getText(`${base}api/state`)).text) as DashboardState;
const getCurves = async (base: string) => JSON.parse((await getText(`${base}api/curves`)).text) as CurvesView[];

/** /metrics: valid text exposition (strict line checks and an independent parser); returns the families. */
async function scrape(url: string) {
  const { text, type } = await getText(url);
  expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
  expect(expositionProblems(text)).toEqual([]);
  const families = parseExposition(text);
  for (const name of [
    'panta_events_written',
    'panta_calls_in_flight',
    'panta_llm_calls_total',
    'panta_llm_tokens_total',
    'panta_llm_retries_total',
  ]) {
    expect(
      families.map((f) => f.name),
      name,
    ).toContain(name);
  }
  expect(families.find((f) => f.name === 'panta_llm_calls_total')!.type).toBe('COUNTER');
  expect(families.find((f) => f.name === 'panta_events_written')!.type).toBe('GAUGE');
  return families;
}

const started: PantaProcess[] = [];
function start(args: string[], env: Record<string, string> = {}): PantaProcess {
  const p = pantaProcess(args, env);
  started.push(p);
  return p;
}
afterAll(() => {
  for (const p of started) p.kill('SIGKILL');
});

describe('panta dashboard --corpus on a sweep `panta run` is writing', () => {
  const dir = tempDir('panta-dashboard-');
  const out = join(dir, 'corpus');
  let run: PantaProcess;
  let dashboard: PantaProcess;
  let base: string;
  let runMetrics: string;

  beforeAll(async () => {
    const runPort = await freePort();
    runMetrics = `http://127.0.0.1:${runPort}/metrics`;
    run = start(['run', writeSpec(dir, spec('watched', 80, 4)), '--out', out, '--metrics-port', String(runPort)]);
    await waitFor('the corpus folder', async () => existsSync(join(out, 'manifest.json')));
    const port = await freePort();
    base = `http://127.0.0.1:${port}/`;
    dashboard = start(['dashboard', '--corpus', out, '--port', String(port)]);
    await waitFor('the dashboard', async () => (await fetch(`${base}healthz`)).ok);
  }, 120_000);

  it('reports progress that advances, live from the running process', async () => {
    const first = await waitFor('events written', async () => {
      const s = await getState(base);
      return s.sweeps[0] && s.sweeps[0].eventsWritten > 0 ? s : undefined;
    });
    expect(first.error).toBeNull();
    expect(first.watching).toContain(out);
    const sweep = first.sweeps[0];
    expect(sweep).toMatchObject({ name: 'watched', phase: 'running', live: true, eventsTotal: EVENTS, runsTotal: 12 });
    expect(sweep.eventsWritten).toBeLessThan(EVENTS);
    expect(sweep.inflight).toBeGreaterThanOrEqual(0);
    expect(sweep.inflight).toBeLessThanOrEqual(4);
    const second = await waitFor('more events written', async () => {
      const s = await getState(base);
      return s.sweeps[0].eventsWritten > sweep.eventsWritten ? s : undefined;
    });
    expect(second.at).toBeGreaterThan(first.at);
    expect(second.sweeps[0].calls).toBeGreaterThanOrEqual(second.sweeps[0].eventsWritten);
    expect(second.sweeps[0].runs.length).toBeGreaterThan(0);
    for (const r of second.sweeps[0].runs) expect(r.total).toBe(80);
  });

  it('serves Prometheus metrics from the dashboard and from `panta run --metrics-port`, consistent with the corpus', async () => {
    for (const [url, role] of [
      [`${base}metrics`, 'dashboard'],
      [runMetrics, 'run'],
    ] as const) {
      const families = await scrape(url);
      const labels = { sweep: 'watched', role };
      const written = sampleValue(families, 'panta_events_written', labels)!;
      expect(written, url).toBeGreaterThan(0);
      expect(written, url).toBeLessThanOrEqual(EVENTS);
      expect(sampleValue(families, 'panta_events_planned', labels), url).toBe(EVENTS);
      expect(sampleValue(families, 'panta_runs_planned', labels), url).toBe(12);
      expect(sampleValue(families, 'panta_llm_calls_total', labels)!, url).toBeGreaterThanOrEqual(written);
      expect(sampleValue(families, 'panta_llm_retries_total', labels), url).toBe(0);
      expect(sampleValue(families, 'panta_runs_finished', labels)!, url).toBeLessThanOrEqual(12);
      expect(sampleValue(families, 'panta_events_per_second', labels)!, url).toBeGreaterThanOrEqual(0);
    }
  });

  it.skipIf(!HAVE_CHROMIUM)(
    'the page in headless Chromium: progress advances without reload, curves appear; nothing fetched elsewhere',
    async () => {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
        const requests: string[] = [];
        page.on('request', (r) => requests.push(r.url()));
        await page.goto(base);
        const written = async () => Number(await page.locator('.sweep .events-written').first().getAttribute('data-value'));
        await page.locator('.sweep .events-written').first().waitFor();
        const before = await written();
        await page.screenshot({ path: join(dir, 'dashboard-1.png'), fullPage: true });
        await waitFor('the page to show more events', async () => (await written()) > before, 30_000);
        expect(await page.locator('#connection').textContent()).toBe('live');
        expect(await page.locator('.sweep .events-total').first().textContent()).toBe('960');
        await page.locator('[data-figure^="magnetisation-"] svg').waitFor({ timeout: 45_000 });
        expect(await page.locator('[data-figure]').count()).toBe(3);
        expect(await page.locator('[data-figure="rho"] svg').count()).toBe(1);
        await page.screenshot({ path: join(dir, 'dashboard-2.png'), fullPage: true });
        expect(existsSync(join(dir, 'dashboard-2.png'))).toBe(true);
        expect(requests.filter((u) => !u.startsWith(base))).toEqual([]);

        // The report of the same corpus, still being written: what is complete, with a note saying so.
        const report = join(dir, 'report');
        const made = await pantaAsync(['report', out, '--out', report]);
        expect(made.code, made.stderr).toBe(0);
        const reportPage = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
        const fetched: string[] = [];
        reportPage.on('request', (r) => fetched.push(r.url()));
        await reportPage.goto(pathToFileURL(join(report, 'index.html')).href);
        const status = (JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { status: string }).status;
        if (status !== 'complete')
          expect((await reportPage.locator('.note').allTextContents()).join(' ')).toMatch(/of 12 runs are complete/);
        const figures = reportPage.locator('figure svg');
        expect(await figures.count()).toBeGreaterThanOrEqual(5);
        // the paper's tables and figures (Table 7, majority vs fate, Tables 9 and 10, Figures 5 and 6, CDS(t))
        for (const id of ['hallucination-share', 'majority-fate', 'geometry-ladder', 'encoder-robustness'])
          expect(await reportPage.locator(`section#${id} h3`).count(), id).toBe(1);
        for (const id of ['amplification', 'hallucination-by-sweep', 'majority-fate-grid', 'cds-hashing'])
          expect((await reportPage.locator(`section#${id} figure svg`).boundingBox())?.width, id).toBeGreaterThan(200);
        expect(await reportPage.locator('section#hallucination-share tbody tr').count()).toBeGreaterThan(0);
        const box = await figures.first().boundingBox();
        expect(box!.width).toBeGreaterThan(200);
        await reportPage.screenshot({ path: join(dir, 'report.png'), fullPage: true });
        expect(existsSync(join(dir, 'report.png'))).toBe(true);
        expect(fetched.filter((u) => !u.startsWith('file:'))).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    120_000,
  );

  it('shows the finished sweep: every event, complete, final curves', async () => {
    const done = await run.exited;
    expect(done.stderr).toMatch(/panta run: metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(done.code).toBe(0);
    const state = await waitFor('the complete corpus', async () => {
      const s = await getState(base);
      return s.sweeps[0].phase === 'complete' ? s : undefined;
    });
    expect(state.sweeps[0]).toMatchObject({ eventsWritten: EVENTS, runsFinished: 12, runsFailed: 0, inflight: 0, live: false });
    const curves = await waitFor('the final curves', async () => {
      const c = await getCurves(base);
      return c[0] && !c[0].provisional && c[0].runsMeasured === 12 ? c : undefined;
    });
    expect(curves[0].figures.map((f) => f.id)).toEqual(['magnetisation-hashing', 'cohesion-hashing', 'rho']);
    expect(curves[0].figures[0].svg).toMatch(/^<svg/);
    const families = await scrape(`${base}metrics`);
    expect(sampleValue(families, 'panta_events_written', { sweep: 'watched' })).toBe(EVENTS);
    dashboard.kill('SIGTERM');
    expect((await dashboard.exited).code).toBe(0);
  }, 120_000);
});

describe('panta dashboard --redis on a distributed sweep', () => {
  const dir = tempDir('panta-dashboard-redis-');
  const out = join(dir, 'corpus');
  let server: RedisServer;
  let base: string;
  let workerMetrics: string[];
  let scheduler: PantaProcess;
  const workers: PantaProcess[] = [];

  beforeAll(async () => {
    server = await RedisServer.start(dir);
    const env = { PANTA_REDIS_URL: server.url };
    workerMetrics = [];
    // The collector's own --out, where the scheduler names another folder: the dashboard reads the collector's.
    start(['collector', '--durable-ms', '300', '--out', out], env);
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      workerMetrics.push(`http://127.0.0.1:${port}/metrics`);
      workers.push(start(['worker', '--concurrency', '3', '--metrics-port', String(port)], env));
    }
    scheduler = start(['scheduler', writeSpec(dir, spec('cluster', 60, 12)), '--out', join(dir, 'as-the-scheduler-sees-it')], env);
    const port = await freePort();
    base = `http://127.0.0.1:${port}/`;
    // no --corpus: the curves come from the out folder the collector recorded in Redis
    start(['dashboard', '--redis', server.url, '--port', String(port)]);
    await waitFor('the dashboard', async () => (await fetch(`${base}healthz`)).ok);
  }, 120_000);

  afterAll(async () => {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    await server?.stop();
  });

  it("progress from the status in Redis advances; workers and the dashboard expose metrics; curves from the folder the collector writes (its --out, not the scheduler's)", async () => {
    const first = await waitFor('events written', async () => {
      const s = await getState(base);
      return s.sweeps[0] && s.sweeps[0].eventsWritten > 0 && s.sweeps[0].eventsWritten < EVENTS ? s : undefined;
    });
    const sweep = first.sweeps[0];
    expect(sweep.id).toMatch(/^cluster-[0-9a-f]{12}$/);
    expect(sweep).toMatchObject({ name: 'cluster', phase: 'running', live: true, eventsTotal: EVENTS, runsTotal: 12, runsFailed: 0 });
    expect(first.queue).toBeDefined();
    await waitFor('more events written', async () => (await getState(base)).sweeps[0].eventsWritten > sweep.eventsWritten);

    let committed = 0;
    for (const url of workerMetrics) {
      const families = await scrape(url);
      const w = sampleValue(families, 'panta_events_written', { sweep: sweep.id, role: 'worker' }) ?? 0;
      expect(w).toBeLessThanOrEqual(EVENTS);
      expect(sampleValue(families, 'panta_llm_calls_total', { sweep: sweep.id }) ?? 0).toBeGreaterThanOrEqual(w);
      committed += w;
    }
    expect(committed).toBeGreaterThan(0);
    const families = await scrape(`${base}metrics`);
    const written = sampleValue(families, 'panta_events_written', { sweep: sweep.id, role: 'dashboard' })!;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThanOrEqual(EVENTS);
    expect(sampleValue(families, 'panta_events_planned', { sweep: sweep.id })).toBe(EVENTS);
    expect(families.map((f) => f.name)).toContain('panta_events_requeued_total');

    expect((await scheduler.exited).code).toBe(0);
    const done = await waitFor('the finished sweep', async () => {
      const s = await getState(base);
      return s.sweeps[0].phase === 'done' ? s : undefined;
    });
    expect(done.sweeps[0]).toMatchObject({ eventsWritten: EVENTS, runsFinished: 12 });
    const curves = await waitFor('curves of the corpus', async () => {
      const c = await getCurves(base);
      return c[0] && c[0].runsMeasured === 12 ? c : undefined;
    });
    expect(curves[0].dir).toBe(out);
    expect(curves[0].figures).toHaveLength(3);
  }, 180_000);
});

describe('panta dashboard: bad input', () => {
  it('a corpus folder that does not exist: one line naming it, exit 2', () => {
    const r = panta(['dashboard', '--corpus', '/nonexistent', '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^panta: \/nonexistent: no such folder; fix: /);
  });

  // The refusals below run in this process (the exit status and the one line are runCli's; the spawn above is the
  // process's).
  it('a folder that is not a corpus, and a bad port: one line each, exit 2', async () => {
    const dir = tempDir('panta-dashboard-bad-');
    const notCorpus = await pantaInProcess(['dashboard', '--corpus', dir]);
    expect(notCorpus.code).toBe(2);
    expect(notCorpus.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/manifest\.json: missing: this folder is not a Panta corpus; fix: /),
    ]);
    const port = await pantaInProcess(['dashboard', '--port', 'x']);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/--port/);
  });
});

/** A GET with the Host header as given (fetch will not forge it). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

describe('panta dashboard: DNS rebinding and exposure', () => {
  it('hostAllowed: loopback names, IP addresses, this machine, the names given; nothing else', () => {
    for (const h of [
      'localhost:8080',
      'LOCALHOST.',
      'app.localhost',
      '127.0.0.1:80',
      '[::1]:8080',
      '10.1.2.3',
      `${hostname()}:8080`,
      'dash.example:443',
    ]) {
      expect(hostAllowed(h, ['dash.example']), h).toBe(true);
    }
    for (const h of [
      'evil.example',
      'evil.example:8080',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      'dash.example.evil.example',
      'xn--dash',
    ]) {
      expect(hostAllowed(h, ['dash.example']), h).toBe(false);
    }
  });

  it('a running dashboard answers its own names and 403 with one line to a forged Host, on every path', async () => {
    const dashboard = await startDashboard({
      port: 0,
      watching: 'nothing',
      read: async () => ({ sweeps: [], corpora: [], notes: [] }),
      allowedHosts: ['proxy.example'],
    });
    try {
      const port = dashboard.port;
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `proxy.example:${port}`]) {
        const r = await getWithHost(`${dashboard.url}api/state`, host);
        expect(r.status, host).toBe(200);
        expect(JSON.parse(r.body)).toMatchObject({ watching: 'nothing' });
      }
      for (const path of ['', 'api/state', 'events', 'metrics', 'healthz']) {
        const r = await getWithHost(`${dashboard.url}${path}`, `rebind.evil.example:${port}`);
        expect(r.status, path).toBe(403);
        expect(r.body).toBe(
          'host "rebind.evil.example" is not one this server answers to (DNS rebinding protection); fix: open it as localhost or by its IP address, or start it with --allowed-hosts rebind.evil.example\n',
        );
      }
    } finally {
      await dashboard.close();
    }
  });

  it('`--host 0.0.0.0` warns that the dashboard is exposed; `--allowed-hosts` names are answered, others refused', async () => {
    const dir = tempDir('panta-dashboard-exposed-');
    const out = join(dir, 'corpus');
    // The corpus is the fixture: made in this process.
    const made = await pantaInProcess([
      'run',
      writeSpec(dir, spec('exposed', 0, 2).replace('trials: 3', 'trials: 1').replace('sweeps: 4', 'sweeps: 1')),
      '--out',
      out,
    ]);
    expect(made.code, made.stderr).toBe(0);
    const port = await freePort();
    const d = start([
      'dashboard',
      '--corpus',
      out,
      '--port',
      String(port),
      '--host',
      '0.0.0.0',
      '--allowed-hosts',
      'dash.example, other.example',
    ]);
    await waitFor('the dashboard and its warning', async () => d.stderr().includes('unless that is intended\n'));
    expect(d.stderr()).toContain(
      `panta dashboard: warning: the dashboard is exposed on every network interface: whoever reaches this machine on port ${port} sees the sweeps it watches (no login); bind --host 127.0.0.1 unless that is intended`,
    );
    expect((await getWithHost(`http://127.0.0.1:${port}/healthz`, `dash.example:${port}`)).status).toBe(200);
    expect((await getWithHost(`http://127.0.0.1:${port}/healthz`, `evil.example:${port}`)).status).toBe(403);
    d.kill('SIGTERM');
    expect((await d.exited).code).toBe(0);

    const quiet = start(['dashboard', '--corpus', out, '--port', '0']);
    await waitFor('the loopback dashboard', async () => quiet.stderr().includes('panta dashboard: http://'));
    quiet.kill('SIGTERM');
    const ended = await quiet.exited;
    expect(ended.code).toBe(0);
    expect(ended.stderr).toMatch(/^panta dashboard: http:\/\/127\.0\.0\.1:\d+\/ .*\n$/);

    const bad = await pantaInProcess(['dashboard', '--corpus', out, '--allowed-hosts', 'http://x/']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'panta: --allowed-hosts: "http://x/" is not a host name; fix: give host names separated by commas, without scheme, port or path, e.g. --allowed-hosts panta.example.org,dash.lan\n',
    );
  }, 120_000);
});
