import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { RHEON6, ROOT, pantaAsync, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

// A process that runs two sweeps whose runs share ids (a worker serving one sweep after another; here two
// embedded sweeps in one process) deals each its own population: the same grid under another seed assigns
// other entries to other agents, whatever the first sweep left in memory.
const spec = (seed: number) => `name: persona-cache
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [12]
temperatures: [0.7]
sweeps: 1
seed: ${seed}
population: {file: ${join(ROOT, 'examples/beliefs.jsonl')}, assign: distinct}
`;

const personas = async (out: string) =>
  (
    await queryRows<{ agent: number; persona: string | null }>(
      `SELECT agent, persona FROM read_parquet('${out}/events/**/*.parquet') WHERE role = 'agent' ORDER BY event`,
    )
  ).map((r) => `${r.agent}:${r.persona}`);

describe('population assignments in a process that runs several sweeps', () => {
  it("are each sweep's own: the second sweep in one process equals the same sweep run alone", async () => {
    const dir = tempDir('panta-persona-cache-');
    await runSweep(writeSpec(dir, spec(1), 'one.yaml'), { out: join(dir, 'one'), logLevel: 'silent' });
    await runSweep(writeSpec(dir, spec(2), 'two.yaml'), { out: join(dir, 'two'), logLevel: 'silent' });
    const alone = await pantaAsync(['run', join(dir, 'two.yaml'), '--out', join(dir, 'alone')]);
    expect(alone.code, alone.stderr).toBe(0);
    const [one, two, single] = await Promise.all([personas(join(dir, 'one')), personas(join(dir, 'two')), personas(join(dir, 'alone'))]);
    expect(two).toEqual(single);
    // the seeds deal the entries differently: a stale assignment would have shown
    expect(two).not.toEqual(one);
  }, 120_000);
});
