import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dynamicsArms, parseDataset, parseSweepSpec, planSweep, poolsBudget, resolveBudgetRule, teamAnswerTokens } from '@panta/core';
import { teamDepartures } from '../packages/studies/src/teams/report/departures.js';
import { catalog } from '@panta/report';
import '@panta/studies/report';
import { ROOT } from './helpers.js';

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

/** The rows of one paper's table in docs/departures.md, each as one line `paper | Panta | kind`. */
function rows(paper: string): string[] {
  const section = new RegExp(`^## ${paper}\\n([\\s\\S]*?)(?=^## |$(?![\\s\\S]))`, 'm').exec(read('docs/departures.md'))?.[1] ?? '';
  return section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| paper') && !l.startsWith('| ---'));
}
const kind = (row: string) => row.slice(0, -2).split(' | ').at(-1);

describe("docs/departures.md: the Boards paper's departures", () => {
  const boards = rows('Boards');
  const row = (re: RegExp) => boards.find((r) => re.test(r)) ?? '';

  it('lists every row of the paper with its kind', () => {
    expect(boards.length).toBeGreaterThanOrEqual(10);
    for (const r of boards) expect(['option', 'stated', 'matches', 'none'], r).toContain(kind(r));
    for (const re of [
      /total token budget/,
      /FanOutQA/,
      /Belief injection/,
      /revise_belief tool/,
      /changing its own mind/,
      /observer LLM/,
      /down \(debate/,
      /GPQA/,
      /vanilla/,
    ])
      expect(row(re), String(re)).not.toBe('');
    expect(kind(row(/changing its own mind/))).toBe('option');
    expect(row(/changing its own mind/)).toMatch(/`team.revisions: author` \(the default of a new sweep\).*`team.revisions: object`/);
    expect(kind(row(/down \(debate/))).toBe('matches');
    expect(row(/down \(debate/)).toMatch(/arm `down`/);
  });

  it('the total budget: one pool for the chain by default (budget_rule: pool), the split in advance an option that old corpora read as', () => {
    const text = read('examples/lost-in-propagation.yaml');
    const spec = parseSweepSpec(text, 'lost-in-propagation.yaml');
    expect(spec.team?.token_budget).toBe(480);
    expect(spec.team?.budget_rule).toBeUndefined();
    resolveBudgetRule(spec, dynamicsArms(spec)); // as loadSweep does for a new sweep
    expect(spec.team?.budget_rule).toBe('pool');
    const runs = planSweep(spec, parseDataset(read('datasets/multifact26.jsonl'), 'multifact26.jsonl'), 'lost-in-propagation.yaml');
    expect(runs.every((r) => poolsBudget(r))).toBe(true);
    // A stored spec without the key (a corpus from before it) reads as split: floor(B / N) a member.
    const old = parseSweepSpec(text, 'lost-in-propagation.yaml');
    const oldRuns = planSweep(old, parseDataset(read('datasets/multifact26.jsonl'), 'multifact26.jsonl'), 'lost-in-propagation.yaml');
    for (const n of old.sizes as number[]) {
      const run = oldRuns.find((r) => r.n === n)!;
      expect(poolsBudget(run)).toBe(false);
      expect(teamAnswerTokens(run, old.max_tokens)).toBe(Math.floor(480 / n));
    }
    expect(kind(row(/total token budget/))).toBe('matches');
    expect(row(/total token budget/)).toMatch(/`team.budget_rule: pool` \(the default of a new sweep\).*`split`/);
    expect(spec.departures?.join(' ')).not.toMatch(/split in advance/);
    // A corpus that used the split has it named in the captions of the lost-in-propagation figure and table.
    const relay = [{ dynamics: 'relay', arm: 'none' }];
    expect(teamDepartures(relay, { team: { token_budget: 480 } })).toEqual([expect.stringMatching(/split in advance/)]);
    expect(teamDepartures(relay, { team: { token_budget: 480, budget_rule: 'split' } })).toEqual([
      expect.stringMatching(/split in advance/),
    ]);
    expect(teamDepartures(relay, { team: { token_budget: 480, budget_rule: 'pool' } })).toEqual([]);
  });

  it('significance against vanilla matches: the teams section has table team-arm-tests', () => {
    expect(kind(row(/vanilla/))).toBe('matches');
    expect(row(/vanilla/)).toMatch(/`team-arm-tests`/);
    expect(catalog().find((s) => s.name === 'teams')?.tableIds).toContain('team-arm-tests');
  });
});
