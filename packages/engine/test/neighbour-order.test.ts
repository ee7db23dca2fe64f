import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessages } from '@panta/core';
import { queryRows } from '@panta/corpus';
import type { LlmBackend } from '@panta/llm';
import { RHEON6, panta, tempDir, writeSpec } from '../../../test/helpers.js';
import { InProcessTransport, loadSweep, runSweep } from '../src/index.js';

const SPEC = `name: neighbour-order
dataset: ${RHEON6}
prompts: [fq367]
geometries: [meanfield]
sizes: [10]
temperatures: [0.7]
trials: 2
sweeps: 3
seed: 11
`;

/** A backend that keeps every prompt it is sent, keyed by the event's seed (unique per call). */
function recording(inner: LlmBackend, seen: Map<number, ChatMessages>): LlmBackend {
  return {
    kind: inner.kind,
    model: inner.model,
    async complete(request) {
      seen.set(request.seed, request.messages());
      return inner.complete(request);
    },
    close: () => inner.close(),
  };
}

const neighboursOf = (r: Record<string, unknown>) => (r.neighbours as number[]).map(Number);

describe('mean-field neighbour order', () => {
  it("the row's neighbours are the prompt's order, a shuffle per event, the same at concurrency 1 and 16", async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const seen = new Map<number, ChatMessages>();
    const out = join(dir, 'c16');
    await runSweep(spec, {
      out,
      concurrency: 16,
      logLevel: 'silent',
      transport: (services) => new InProcessTransport({ ...services, backend: recording(services.backend, seen) }),
    });
    const serial = await runSweep(spec, { out: join(dir, 'c1'), concurrency: 1, logLevel: 'silent' });
    expect(serial.status).toBe('complete');
    const query = (o: string) =>
      queryRows(
        `SELECT run_id, event, agent, seed, neighbours, read_versions, response FROM read_parquet('${o}/events/*.parquet') WHERE role = 'agent' ORDER BY run_id, event`,
      );
    const rows = await query(out);
    expect(await query(join(dir, 'c1'))).toEqual(rows);
    const updates = rows.filter((r) => Number(r.event) >= 10);
    expect(updates.length).toBe(2 * 3 * 10);
    for (const r of updates) {
      const { user } = seen.get(Number(r.seed))!;
      const listed = user
        .split('\n')
        .filter((l) => l.startsWith('- Agent '))
        .map((l) => Number(/^- Agent (\d+):/.exec(l)![1]));
      expect(listed, `${r.run_id} event ${r.event}`).toEqual(neighboursOf(r));
    }
    const ascending = updates.filter((r) => neighboursOf(r).every((b, i, xs) => i === 0 || xs[i - 1] < b));
    expect(ascending.length).toBeLessThan(3);
    // The same agent of the same run, updated twice: two orders.
    const key = (r: Record<string, unknown>) => `${r.run_id}/${r.agent}`;
    const first = new Map<string, number[]>();
    let differs = 0;
    for (const r of updates) {
      const before = first.get(key(r));
      if (before === undefined) first.set(key(r), neighboursOf(r));
      else if (JSON.stringify(before) !== JSON.stringify(neighboursOf(r))) differs++;
    }
    expect(differs).toBeGreaterThan(0);
    const verify = panta(['verify', out]);
    expect(verify.stdout + verify.stderr).toMatch(/^ok: /);
  });

  it('neighbour_order per-run with rheon-a2-prefix: one order per run, seeded per run, the same answers as per event', async () => {
    const dir = tempDir();
    const perRunSpec = writeSpec(dir, `${SPEC}template: rheon-a2-prefix\nneighbour_order: per-run\n`, 'per-run.yaml');
    const perEventSpec = writeSpec(dir, `${SPEC}template: rheon-a2-prefix\n`, 'per-event.yaml');
    // Saying per-event is the same corpus as saying nothing; per-run is another one (a resume refuses it).
    const explicit = writeSpec(dir, `${SPEC}template: rheon-a2-prefix\nneighbour_order: per-event\n`, 'explicit.yaml');
    expect(loadSweep(explicit).fingerprint).toBe(loadSweep(perEventSpec).fingerprint);
    expect(loadSweep(perRunSpec).fingerprint).not.toBe(loadSweep(perEventSpec).fingerprint);
    const seen = new Map<number, ChatMessages>();
    const out = join(dir, 'per-run');
    const run = await runSweep(perRunSpec, {
      out,
      concurrency: 16,
      logLevel: 'silent',
      transport: (services) => new InProcessTransport({ ...services, backend: recording(services.backend, seen) }),
    });
    expect(run.status).toBe('complete');
    await runSweep(perEventSpec, { out: join(dir, 'per-event'), concurrency: 16, logLevel: 'silent' });
    const query = (o: string) =>
      queryRows(
        `SELECT run_id, event, agent, seed, neighbours, response FROM read_parquet('${o}/events/*.parquet') WHERE role = 'agent' ORDER BY run_id, event`,
      );
    const rows = await query(out);
    const updates = rows.filter((r) => Number(r.event) >= 10);
    for (const r of updates) {
      const { user } = seen.get(Number(r.seed))!;
      // The prefix layout: neighbours before t and the previous answer.
      expect(user.indexOf('- Agent ')).toBeLessThan(user.indexOf('\nt = '));
      const listed = user
        .split('\n')
        .filter((l) => l.startsWith('- Agent '))
        .map((l) => Number(/^- Agent (\d+):/.exec(l)![1]));
      expect(listed).toEqual(neighboursOf(r));
      // Any two prompts of the run list the agents they share in one relative order.
      for (const other of updates.filter((x) => x.run_id === r.run_id).map(neighboursOf)) {
        const common = listed.filter((b) => other.includes(b));
        expect(other.filter((b) => common.includes(b))).toEqual(common);
      }
    }
    const [a, b] = [...new Set(updates.map((r) => String(r.run_id)))];
    const firstOf = (id: string) => neighboursOf(updates.find((r) => r.run_id === id)!);
    expect(firstOf(a)).not.toEqual(firstOf(b));
    // The surrogate reads how many neighbours give each answer, not where: the same answers either way.
    const perEvent = await query(join(dir, 'per-event'));
    expect(rows.map((r) => r.response)).toEqual(perEvent.map((r) => r.response));
    expect(rows.map((r) => neighboursOf(r).sort())).toEqual(perEvent.map((r) => neighboursOf(r).sort()));
    const verify = panta(['verify', out]);
    expect(verify.stdout + verify.stderr).toMatch(/^ok: /);
  });
});
