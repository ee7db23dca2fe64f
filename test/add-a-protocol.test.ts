import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parseSweepSpec, PROTOCOL_NAMES, registerProtocol, sweepSpecJsonSchema, type CampaignCost } from '@panta/core';
import { queryRows, verifyCorpus } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { planCommand } from '../packages/cli/src/commands/plan.js';
import { chorus } from './fixtures/chorus-protocol.js';
import { RHEON6, tempDir, writeSpec } from './helpers.js';

// The one registry line a new protocol needs (a built-in one is one line of PROTOCOLS instead).
registerProtocol('chorus', chorus);

const SPEC = `name: chorus
dataset: ${RHEON6}
prompts: [fq367]
geometries: [ring]
sizes: [6]
temperatures: [0.7]
sweeps: 2
seed: 3
protocol: [glauber, chorus]
`;

/** `panta plan SPEC --json`, in this process (where chorus is registered). */
function planJson(file: string): CampaignCost {
  let text = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    text += String(chunk);
    return true;
  });
  try {
    expect(planCommand(file, { json: true })).toBe(0);
  } finally {
    spy.mockRestore();
  }
  return JSON.parse(text) as CampaignCost;
}

describe('a protocol added as one file and one registry line', () => {
  it('the schema accepts its name (and lists it), and still refuses an unknown one', () => {
    const spec = parseSweepSpec(SPEC, 'spec.yaml');
    expect(spec.protocol).toEqual(['glauber', 'chorus']);
    expect(PROTOCOL_NAMES).toContain('chorus');
    const schema = sweepSpecJsonSchema() as { properties: { protocol: { anyOf: { enum?: string[] }[] } } };
    expect(schema.properties.protocol.anyOf[0].enum).toContain('chorus');
    expect(() => parseSweepSpec(SPEC.replace('chorus]', 'gossip]'), 'spec.yaml')).toThrow(/protocol.*gossip|gossip.*protocol/s);
    // A name is registered once: a built-in one cannot be replaced.
    expect(() => registerProtocol('glauber', chorus)).toThrow(/already registered/);
  });

  it('panta plan costs it (an update quotes every other agent), a run follows it and verify checks it', async () => {
    const dir = tempDir();
    const file = writeSpec(dir, SPEC);
    const cost = planJson(file);
    expect(cost.runs).toBe(2);
    expect(cost.calls.map((c) => c.kind)).toEqual(['agent']);
    // A ring's update quotes 2 neighbours; chorus's quotes the other 5: 3 more answers per update at max_tokens.
    const agent = cost.calls.find((c) => c.kind === 'agent')!;
    const glauberAgent = planJson(writeSpec(dir, SPEC.replace('[glauber, chorus]', 'glauber'), 'glauber.yaml')).calls[0];
    const updates = 6 * 2;
    expect(agent.promptTokens - 2 * glauberAgent.promptTokens).toBeGreaterThanOrEqual(updates * 3 * cost.answerTokens);

    const out = join(dir, 'out');
    expect((await runSweep(file, { out, logLevel: 'silent' })).status).toBe('complete');
    const reads = (await queryRows(
      `SELECT run_id, max(len(neighbours))::INTEGER AS k FROM read_parquet('${out}/events/*.parquet') WHERE role = 'agent' AND sweep > 0 GROUP BY run_id ORDER BY run_id`,
    )) as { run_id: string; k: number }[];
    expect(reads.map((r) => [r.run_id.split('-').at(-2), r.k])).toEqual([
      ['chorus', 5],
      ['glauber', 2],
    ]);
    const report = await verifyCorpus(out);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });
});
