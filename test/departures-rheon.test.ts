import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, panta } from './helpers.js';

/** The rows of one paper's table in docs/departures.md: [paper, Panta, kind]. */
function rows(paper: string): string[][] {
  const text = readFileSync(join(ROOT, 'docs', 'departures.md'), 'utf8');
  const section = new RegExp(`^## ${paper}\\n([\\s\\S]*?)(?=^## |$(?![\\s\\S]))`, 'm').exec(text)?.[1] ?? '';
  return section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| paper') && !l.startsWith('| ---'))
    .map((l) =>
      l
        .slice(2, -2)
        .split(/(?<!\\) \| /)
        .map((c) => c.trim()),
    );
}

describe("docs/departures.md: the Rheon paper's departures", () => {
  it('has a section per paper, and every Rheon row says its kind: an option with the paper as default, stated, or matching', () => {
    const text = readFileSync(join(ROOT, 'docs', 'departures.md'), 'utf8');
    for (const paper of ['Rheon', 'SSVP', 'Boards', 'Drift']) expect(text, paper).toMatch(new RegExp(`^## ${paper}$`, 'm'));
    const rheon = rows('Rheon');
    expect(rheon.length).toBeGreaterThanOrEqual(8);
    for (const r of rheon) expect(['option', 'stated', 'matches', 'none'], r[0]).toContain(r.at(-1));
  });

  it("names the 4-bit checkpoint the example and the deploy files offer, Figure 6's spread option and the Insight 4 tables", () => {
    const rheon = rows('Rheon').map((r) => r.join(' | '));
    const row = (re: RegExp) => rheon.find((r) => re.test(r)) ?? '';
    expect(row(/4-bit/)).toMatch(/Qwen\/Qwen3-14B-AWQ.*\| stated$/);
    expect(readFileSync(join(ROOT, 'examples', 'eraclitus.yaml'), 'utf8')).toMatch(/departures:[\s\S]*BF16[\s\S]*Qwen\/Qwen3-14B-AWQ/);
    expect(row(/Figure 6/)).toMatch(/--spread se.*\| option$/);
    expect(row(/truncation at t = 4/)).toMatch(/`truncation`/);
    expect(row(/correlates/)).toMatch(/`cohesion-accuracy`.*Fisher/);
  });

  it("the option the doc names exists with the paper's default: panta report --spread, sd unless asked", () => {
    const help = panta(['report', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(
      /--spread <kind> .*sd \(one standard deviation, the paper's\).*\(choices: "sd", "se", default: "sd"\)/,
    );
  });
});
