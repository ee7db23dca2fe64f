import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Prompt, RunPlan } from '@panta/core';
import { defineTable, queryRows, shardPath, teamsTablePath, writeParquetTable } from '@panta/corpus';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers.js';
import { runTableRows } from '../src/run-table.js';
import { teamDriftByRun, teamTableRows, writeTeamTable } from '../src/team-table.js';

/** The event-shard columns teamTableRows reads. */
const SHARD = defineTable('events', [
  { name: 'run_id', type: 'VARCHAR' },
  { name: 'event', type: 'BIGINT' },
  { name: 'role', type: 'VARCHAR' },
  { name: 'sweep', type: 'INTEGER' },
  { name: 'agent', type: 'INTEGER' },
  { name: 'response', type: 'VARCHAR' },
  { name: 'reply_status', type: 'VARCHAR' },
  { name: 'tag', type: 'VARCHAR', nullable: true },
  { name: 'prompt_tokens', type: 'BIGINT' },
  { name: 'completion_tokens', type: 'BIGINT' },
]);

type Row = [role: string, sweep: number, response: string, status?: string];

async function shard(out: string, runId: string, rows: Row[]): Promise<void> {
  mkdirSync(dirname(shardPath(out, runId)), { recursive: true });
  await writeParquetTable(
    shardPath(out, runId),
    SHARD,
    rows.map(([role, sweep, response, status], event) => ({
      run_id: runId,
      event,
      role,
      sweep,
      agent: 0,
      response,
      reply_status: status ?? 'ok',
      tag: null,
      prompt_tokens: status === 'skipped' || role === 'solution' ? 0 : 100,
      completion_tokens: status === 'skipped' || role === 'solution' ? 0 : 10,
    })),
  );
}

const facts: Prompt = {
  id: 'mf',
  question: 'q',
  accepted: ['Paris'],
  false_answers: [],
  false_premise: false,
  source: '',
  facts: ['Paris', 'Rome'],
};
const claim: Prompt = {
  id: 'cl',
  question: 'q',
  accepted: ['refuted'],
  false_answers: ['supported'],
  false_premise: false,
  source: '',
  choices: ['supported', 'refuted'],
};

function plan(runId: string, dynamics: string, prompt: Prompt, protocol = 'glauber', n = 2): RunPlan {
  return {
    runId,
    configId: `${runId}-cfg`,
    trial: 0,
    prompt,
    geometryLabel: 'chain',
    n,
    k: 1,
    temperature: 0.7,
    protocol,
    dynamics,
    arms: { population: 'probe' },
  } as unknown as RunPlan;
}

describe('teams.parquet', () => {
  it('holds one row per team run and turn, read back by DuckDB with the metrics computed by hand', async () => {
    const out = tempDir();
    await shard(out, 'r1', [
      ['relay', 0, 'Paris and Rome'],
      ['relay', 1, 'Rome'],
    ]);
    await shard(out, 'd1', [
      ['persona', 1, 'refuted'],
      ['vote', 1, '1'],
      ['solution', 1, 'refuted'],
      ['persona', 2, 'supported'],
      ['vote', 2, '1'],
      ['solution', 2, 'supported'],
      ['drift-judge', 2, 'DRIFT: lack of progress'],
      ['feedback', 2, 'Back to the claim.'],
      ['persona', 3, 'supported'],
      ['vote', 3, '1'],
      ['solution', 3, 'supported'],
      ['drift-judge', 3, 'NO DRIFT'],
      ['feedback', 3, '', 'skipped'],
    ]);
    const runs = [plan('r1', 'relay', facts), plan('d1', 'debate', claim, 'drift-policy'), plan('pending', 'relay', facts)];
    const teamRows = await teamTableRows(out, runs.slice(0, 2));
    const file = await writeTeamTable(out, runs, teamRows);
    expect(file).toBe(teamsTablePath(out));
    const rows = await queryRows(`SELECT * FROM read_parquet('${file}') ORDER BY run_id DESC, turn`);
    expect(rows.map((r) => [r.run_id, r.turn, r.arm, r.population_arm])).toEqual([
      ['r1', 1, 'none', 'probe'],
      ['d1', 1, 'drift-policy', 'probe'],
      ['d1', 2, 'drift-policy', 'probe'],
      ['d1', 3, 'drift-policy', 'probe'],
    ]);
    // Relay: "Rome" holds 1 of the 2 facts; 2 calls of 100 + 10 tokens.
    expect(rows[0]).toMatchObject({
      exact_match: 0,
      fact_recall: 0.5,
      answer: 'Rome',
      calls: 2,
      prompt_tokens: 200,
      completion_tokens: 20,
    });
    // Debate: scores 1, 0, 0 -> FOCUS null, -1, 0; turns 2-3 drift (onset 2), never recovered.
    expect(rows.slice(1).map((r) => [r.exact_match, r.focus, r.drifting, r.drift_onset, r.recovered])).toEqual([
      [1, null, false, 2, false],
      [0, -1, true, 2, false],
      [0, 0, true, 2, false],
    ]);
    expect(rows.slice(1).map((r) => [r.judge_verdict, r.feedback, Number(r.calls)])).toEqual([
      [null, false, 2],
      ['drift', true, 4],
      ['no_drift', false, 3],
    ]);
  });

  it("gives runs.parquet a debate's FOCUS series and drift (no tolerance), and a relay's empty series", async () => {
    const out = tempDir();
    await shard(out, 'd', [
      ['solution', 1, 'refuted'],
      ['solution', 2, 'supported'],
      ['solution', 3, 'supported'],
      ['solution', 4, 'refuted'],
    ]);
    await shard(out, 'r', [['relay', 0, 'Paris']]);
    const runs = [plan('d', 'debate', claim), plan('r', 'relay', facts, 'glauber', 1)];
    const drift = teamDriftByRun(await teamTableRows(out, runs));
    // Scores 1, 0, 0, 1: FOCUS -1, 0, +1 (total 0); turns 2-3 drift, turn 4 recovers.
    expect(drift.get('d')).toEqual({ focus: [-1, 0, 1], focus_total: 0, drift_tolerance: 0, drift_onset: 2, recovered: true });
    expect(drift.get('r')).toEqual({ focus: [], focus_total: null, drift_tolerance: 0, drift_onset: null, recovered: null });
    const rows = runTableRows({
      runs: runs.map((r) => ({ ...r, geometry: { kind: 'chain' }, sweeps: 1 })) as unknown as RunPlan[],
      totals: new Map(),
      records: new Map(),
      failed: [],
      orderParams: [],
      encoder: 'e',
      tolerance: 'auto',
      cost: () => null,
      teamDrift: drift,
    });
    expect(rows[0]).toMatchObject({ focus: [-1, 0, 1], focus_total: 0, drift_onset: 2, recovered: true, drift_tolerance: 0 });
    expect(rows[1]).toMatchObject({ focus: [], focus_total: null, drift_onset: null, recovered: null, drift_tolerance: 0 });
  });

  it('is not written for a sweep without team runs', async () => {
    const out = tempDir();
    expect(await writeTeamTable(out, [plan('p', 'asynchronous', facts)], await teamTableRows(out, []))).toBeNull();
    expect(existsSync(teamsTablePath(out))).toBe(false);
  });
});
