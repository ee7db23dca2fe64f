import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows, verifyCorpus } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { corpusDiff, pantaInProcess as panta, tempDir, writeSpec } from '../helpers.js';
import { travelExample } from '../travel-example.js';

const num = (v: unknown) => (v === null ? null : Number(v));

/**
 * Calibration: the surrogate's travel scenario (studies/src/travel/surrogate) on examples/ssvp-travel.yaml
 * reproduces the shape of Hallucination as Context Drift, section 4. A retuned scenario constant fails here, not
 * in an engine test.
 */
describe('calibration: the travel scenario on examples/ssvp-travel.yaml (Hallucination as Context Drift, section 4)', () => {
  it('runs, verifies, is the same corpus at concurrency 1 and 64, and shows the paper’s shape in travel.parquet and the report', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, travelExample(), 'travel.yaml');
    const [one, many] = [join(dir, 'one'), join(dir, 'many')];
    expect((await runSweep(spec, { out: one, concurrency: 1, logLevel: 'silent' })).status).toBe('complete');
    expect((await runSweep(spec, { out: many, concurrency: 64, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(one)).problems).toEqual([]);
    expect((await verifyCorpus(many)).problems).toEqual([]);
    expect(await corpusDiff(one, many)).toEqual({ extra: 0, missing: 0 });
    const table = (out: string) => queryRows(`SELECT * FROM read_parquet('${out}/travel.parquet') ORDER BY run_id`);
    const rows = await table(one);
    expect(rows).toEqual(await table(many));
    expect(rows.length).toBe(24);

    // Each role holds its own entry, and reads its own briefing: the Booking agent's names the alternate airport.
    const personas = await queryRows(
      `SELECT DISTINCT run_id, agent, persona FROM read_parquet('${one}/events/*.parquet') WHERE role = 'agent' ORDER BY ALL`,
    );
    for (const run of new Set(personas.map((p) => p.run_id)))
      expect(
        personas
          .filter((p) => p.run_id === run)
          .map((p) => p.persona)
          .sort(),
      ).toEqual(['advisor', 'booking', 'planner']);

    // panta verify recomputes travel.parquet: a changed HR is named (in the concurrency-64 corpus, now that it has
    // been compared: it is the same sweep, complete and verified).
    const tampered = many;
    const file = join(tampered, 'travel.parquet');
    await queryRows(
      `COPY (SELECT * REPLACE (CASE WHEN protocol = 'ssvp' AND prompt_id = 'travel-rome' THEN 0.999 ELSE hr END AS hr) FROM read_parquet('${file}')) TO '${file}.new' (FORMAT parquet)`,
    );
    renameSync(`${file}.new`, file);
    const problems = (await verifyCorpus(tampered)).problems;
    expect(
      problems.some((p) => /^travel\.parquet: travel-rome-meanfield-n3-T0\.3-ssvp-sync-t0: hr 0\.999 stored, /.test(p)),
      problems.join('\n'),
    ).toBe(true);

    // HR of one run recomputed from its shard: the surrogate's answers state the airport only, so HR is the share of
    // answers naming Lisbon's (the injected) among those naming one of the two.
    const [bcn] = await queryRows(
      `SELECT count(*) FILTER (WHERE regexp_matches(lower(response), '\\b(lis|lisbon|humberto delgado)\\b'))::DOUBLE /
              count(*) FILTER (WHERE regexp_matches(lower(response), '\\b(lis|lisbon|humberto delgado|bcn|el prat)\\b')) AS hr
       FROM read_parquet('${one}/events/travel-barcelona-meanfield-n3-T0.3-full-broadcast-sync-t0.parquet') WHERE role = 'agent'`,
    );
    const fbBcn = rows.find((r) => String(r.run_id).startsWith('travel-barcelona-meanfield-n3-T0.3-full-broadcast'))!;
    expect(num(fbBcn.hr)).toBeCloseTo(Number(bcn!.hr), 12);

    // The paper's shape: full broadcast spreads the injected airport (higher HR than no-sync); ssvp's merges name the
    // contradiction at the first exchange (sweep 1); no-sync and full-broadcast make no merge, so no detection.
    const mean = (arm: string, col: string) => {
      const v = rows.filter((r) => r.protocol === arm && r[col] !== null).map((r) => Number(r[col]));
      return v.reduce((a, b) => a + b, 0) / v.length;
    };
    expect(mean('full-broadcast', 'hr')).toBeGreaterThan(mean('no-sync', 'hr') + 0.1);
    expect(mean('ssvp', 'hr')).toBeLessThan(mean('full-broadcast', 'hr'));
    const ssvp = rows.filter((r) => r.protocol === 'ssvp');
    expect(ssvp.filter((r) => r.detection_step !== null).length).toBeGreaterThanOrEqual(6);
    expect(Math.min(...ssvp.filter((r) => r.detection_step !== null).map((r) => Number(r.detection_step)))).toBe(1);
    for (const r of rows.filter((x) => x.protocol !== 'ssvp')) {
      expect(r.detection_step).toBeNull();
      expect(r.detection_note).toBe('no merge (the arm makes none, or no pair passed tau)');
      expect(r.recovery_note).toBe('no contradiction detected');
    }
    // calls: 3 agents x the paper's 6 steps x (answer + summary) = 36 without merges; as the paper counts them, no-sync's
    // 18 task calls only (its summaries only measure CDS), full-broadcast's 18 and a broadcast per agent and teammate
    // at each of the 5 exchanges (30), ssvp's 18 and its 18 summaries and its merges.
    for (const r of rows.filter((x) => x.protocol !== 'ssvp')) expect(Number(r.calls)).toBe(36);
    for (const r of rows) expect(Number(r.task_calls)).toBe(18);
    for (const r of rows.filter((x) => x.protocol === 'no-sync')) expect(Number(r.sync_calls)).toBe(0);
    for (const r of rows.filter((x) => x.protocol === 'full-broadcast')) expect(Number(r.sync_calls)).toBe(30);
    for (const r of ssvp) expect(Number(r.sync_calls)).toBe(Number(r.calls) - 18);
    for (const r of ssvp) expect(Number(r.calls)).toBeGreaterThan(36);

    // The report prints Tables 1-3 shapes from the same file: its means are DuckDB's.
    const report = join(dir, 'report');
    const r = await panta(['report', one, '--out', report]);
    expect(r.code, r.stderr).toBe(0);
    const t1 = readFileSync(join(report, 'tables', 'travel-hr-tcs.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(t1[0]).toBe('arm,metric,trials,mean,95% CI low,95% CI high,note');
    const [fbMean] = await queryRows(`SELECT avg(hr) AS m FROM read_parquet('${one}/travel.parquet') WHERE protocol = 'full-broadcast'`);
    const fbLine = t1.find((l) => l.startsWith('full-broadcast,hr,8,'))!.split(',');
    expect(Number(fbLine[3])).toBeCloseTo(Number(fbMean!.m), 12);
    const t3 = readFileSync(join(report, 'tables', 'travel-tests.csv'), 'utf8');
    expect(t3).toMatch(/^hr,no-sync,full-broadcast,/m);
    expect(readFileSync(join(report, 'tables', 'travel-calls.csv'), 'utf8')).toMatch(
      /^no-sync,8,18,0,18,18,18,36,0,,no merge names the contradiction,/m,
    );

    // tau calibrated on the example's no-sync arm; a spec using it runs and verifies.
    const cal = await panta(['calibrate-tau', one, '--fp', '0.02']);
    expect(cal.code, cal.stderr).toBe(0);
    const tau = /^tau = (\d\.\d\d): /m.exec(cal.stdout);
    expect(tau, cal.stdout).not.toBeNull();
    expect(cal.stdout).toMatch(/false-positive share/);
    const calibrated = join(dir, 'calibrated');
    const calSpec = writeSpec(
      dir,
      travelExample({
        'ssvp: {tau: 0.25}': `ssvp: {tau: {calibrate: 0.02, from: ${one}}}`,
        // One scenario's run is enough to show the calibrated tau in its manifest (and to verify).
        'protocol: [no-sync, full-broadcast, ssvp]': 'protocol: ssvp\nprompts: [travel-rome]',
      }),
      'calibrated.yaml',
    );
    expect((await runSweep(calSpec, { out: calibrated, logLevel: 'silent' })).status).toBe('complete');
    expect(JSON.parse(readFileSync(join(calibrated, 'manifest.json'), 'utf8')).spec.ssvp.tau).toBe(Number(tau![1]));
    expect((await verifyCorpus(calibrated)).problems).toEqual([]);
  }, 300_000);
});
