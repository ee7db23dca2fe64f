import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDataset, parseSweepSpec, planSweep } from '@panta/core';
import type { Table } from '@panta/report';
import { describe, expect, it } from 'vitest';
import { withDepartures } from '../src/departures.js';
import { teamDepartures } from '../src/teams/report/departures.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

const debate = (arm = 'none') => ({ dynamics: 'debate', arm });
const relay = (arm = 'none') => ({ dynamics: 'relay', arm });

describe("the team tables' captions name the departures from the papers a corpus used (docs/departures.md)", () => {
  it('a debate corpus as the Drift paper runs it (memory recent, solution extracted, vote) names none', () => {
    expect(teamDepartures([debate(), debate('drift-policy')], { team: { memory: 'recent', solution: 'extracted' } })).toEqual([]);
  });

  it("a debate corpus from before the keys (no team block) read every turn and kept the winner's text verbatim", () => {
    const d = teamDepartures([debate()], { sweeps: 7 });
    expect(d).toHaveLength(2);
    expect(d[0]).toContain('team.memory: all');
    expect(d[1]).toContain('team.solution: verbatim');
  });

  it("consensus, the gold-gated arm and the spec's own departures are named; the board's rule only where a board arm ran", () => {
    const spec = {
      team: { memory: 'recent', solution: 'extracted', decision: 'consensus', token_budget: 480 },
      departures: ['MMLU-Pro only'],
    };
    const d = teamDepartures([debate(), debate('drift-policy-gold')], spec);
    expect(d.map((x) => x.match(/team\.\w+|drift-policy-gold|MMLU-Pro only/)?.[0])).toEqual([
      'team.decision',
      'drift-policy-gold',
      'MMLU-Pro only',
    ]);
    // A relay corpus: the board's revision rule only where a board arm ran; the budget's split where the stored spec
    // says split or (a corpus from before the key) nothing, once, even where its own departures state it too.
    expect(teamDepartures([relay()], { team: { token_budget: 480, budget_rule: 'pool' } })).toEqual([]);
    expect(teamDepartures([relay()], { team: { token_budget: 480 } })).toEqual([expect.stringContaining('team.budget_rule: split')]);
    expect(teamDepartures([relay()], { team: { token_budget: 480 }, departures: ['a ceiling split in advance'] })).toEqual([
      'a ceiling split in advance',
    ]);
    const r = teamDepartures([relay(), relay('board')], { team: { token_budget: 480, budget_rule: 'pool' } });
    expect(r).toHaveLength(1);
    expect(r[0]).toContain('team.revisions: object');
    expect(teamDepartures([relay('board')], { team: { revisions: 'author' } })).toEqual([]);
    // The observer arms: the trace and the prompts, once, whether or not the spec states it.
    expect(teamDepartures([relay(), relay('table')], {})).toEqual([expect.stringMatching(/one reply, a member having no separate trace/)]);
    expect(teamDepartures([relay('extract')], { departures: ['the observer reads one reply, as members have no separate trace'] })).toEqual(
      ['the observer reads one reply, as members have no separate trace'],
    );
    const example = parseSweepSpec(read('examples/belief-board.yaml'), 'belief-board.yaml');
    expect(teamDepartures([relay('table')], example).filter((d) => /trace/.test(d))).toHaveLength(1);
    // down: Panta's reading of a baseline the paper only names, once, whether or not the spec states it.
    expect(teamDepartures([relay(), relay('down')], {})).toEqual([expect.stringMatching(/^down \(debate on demand\) is Panta's reading/)]);
    expect(teamDepartures([relay('down')], example).filter((d) => /debate on demand/.test(d))).toHaveLength(1);
    expect(teamDepartures([relay('sop')], {})).toEqual([]);
  });

  it('the caption carries them at its end; none leaves it as it is', () => {
    const t: Table = { id: 'x', title: 'X', caption: 'Per arm.', columns: [], rows: [] };
    expect(withDepartures(t, ['a', 'b']).caption).toBe('Per arm. Departures from the paper in this corpus: a; b.');
    expect(withDepartures(t, [])).toBe(t);
  });

  it('examples/drift-debate.yaml runs DRIFTPolicy alone (drift-policy-gold) as an arm beside the judge-gated one', () => {
    const spec = parseSweepSpec(read('examples/drift-debate.yaml'), 'drift-debate.yaml');
    const runs = planSweep(spec, parseDataset(read('datasets/mmlu-pro28.jsonl'), 'mmlu-pro28.jsonl'), 'drift-debate.yaml');
    expect(new Set(runs.map((r) => r.protocol))).toEqual(new Set(['glauber', 'drift-policy', 'drift-policy-gold', 'regenerate']));
  });
});
