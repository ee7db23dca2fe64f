import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDataset, parseSweepSpec, planSweep, teamCalls } from '@panta/core';
import { ROOT } from './helpers.js';

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

describe("the Drift paper's debate as written (docs/departures.md: Drift)", () => {
  it("examples/drift-debate.yaml: a contribution reads the current and the previous turn only (the paper's Limitations)", () => {
    const spec = parseSweepSpec(read('examples/drift-debate.yaml'), 'drift-debate.yaml');
    expect(spec.team?.memory).toBe('recent');
    const runs = planSweep(spec, parseDataset(read('datasets/mmlu-pro28.jsonl'), 'mmlu-pro28.jsonl'), 'drift-debate.yaml');
    const run = runs.find((r) => r.protocol === 'glauber');
    if (!run) throw new Error('no glauber run');
    const calls = teamCalls(run);
    // The last turn's last persona: the contributions it reads are turn 6's and turn 7's, never an earlier turn's.
    const last = calls.filter((c) => c.role === 'persona' && c.sweep === 7).at(-1);
    const turns = new Set(last?.reads.filter((r) => r.kind === 'contribution').map((r) => r.turn));
    expect([...turns].sort()).toEqual([6, 7]);
  });

  it("the schema's default stays `all` (earlier corpora keep their fingerprint and meaning)", () => {
    const spec = parseSweepSpec(read('examples/drift-debate.yaml').replace(/^team: .*$/m, 'team: {}'), 'drift-debate.yaml');
    expect(spec.team?.memory).toBe('all');
  });
});
