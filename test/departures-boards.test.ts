import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDataset, parseSweepSpec, planSweep, teamAnswerTokens } from '@panta/core';
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
    expect(kind(row(/down \(debate/))).toBe('stated');
  });

  it('the total budget: floor(B / N) a member, the caps summing to at most B at every N, stated in the example', () => {
    const spec = parseSweepSpec(read('examples/lost-in-propagation.yaml'), 'lost-in-propagation.yaml');
    const runs = planSweep(spec, parseDataset(read('datasets/multifact26.jsonl'), 'multifact26.jsonl'), 'lost-in-propagation.yaml');
    const budget = spec.team?.token_budget ?? 0;
    expect(budget).toBe(480);
    for (const n of spec.sizes as number[]) {
      const run = runs.find((r) => r.n === n)!;
      expect(teamAnswerTokens(run, spec.max_tokens)).toBe(Math.floor(budget / n));
      expect(teamAnswerTokens(run, spec.max_tokens) * n).toBeLessThanOrEqual(budget);
    }
    expect(kind(row(/total token budget/))).toBe('stated');
    expect(spec.departures?.join(' ')).toMatch(/ceiling split in advance/);
    expect(parseSweepSpec(read('examples/belief-board.yaml'), 'belief-board.yaml').departures?.join(' ')).toMatch(
      /no observer belief table/,
    );
  });

  it('significance against vanilla matches: the teams section has table team-arm-tests', () => {
    expect(kind(row(/vanilla/))).toBe('matches');
    expect(row(/vanilla/)).toMatch(/`team-arm-tests`/);
    expect(catalog().find((s) => s.name === 'teams')?.tableIds).toContain('team-arm-tests');
  });
});
