import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** The rows of the SSVP table in docs/departures.md: [paper, Panta, kind]. */
function rows(): string[][] {
  const text = readFileSync(join(ROOT, 'docs', 'departures.md'), 'utf8');
  const section = /^## SSVP\n([\s\S]*?)(?=^## |$(?![\s\S]))/m.exec(text)?.[1] ?? '';
  return section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| paper') && !l.startsWith('| ---'))
    .map((l) =>
      l
        .slice(2, -2)
        .split(' | ')
        .map((c) => c.trim()),
    );
}

describe("docs/departures.md: the SSVP paper's departures", () => {
  it('every row says its kind; the trial layout is an option with the paper as default, the measures and the sprint are named', () => {
    const ssvp = rows();
    expect(ssvp.length).toBeGreaterThanOrEqual(10);
    for (const r of ssvp) {
      expect(r.length, r[0]).toBe(3);
      expect(['option', 'stated', 'matches', 'none'], r[0]).toContain(r[2]);
    }
    const row = (re: RegExp) => ssvp.find((r) => re.test(r[0]))?.join(' | ') ?? '';
    expect(row(/scenario drawn/)).toMatch(/`trial_prompts: drawn`.*the default.*`trial_prompts: every`.*\| option$/);
    expect(row(/6 steps/)).toMatch(/`sweeps: 5`.*\| matches$/);
    expect(row(/Table 2/)).toMatch(/task calls plus sync calls/);
    expect(row(/final itinerary/)).toMatch(/\| matches$/);
    expect(row(/κ = 0\.79/)).toMatch(/`travel_judge\.parquet`.*`travel-judge-kappa`/);
    expect(row(/Pearson/)).toMatch(/`travel-cds-hr`.*Fisher/);
    expect(row(/Table 4/)).toMatch(/`examples\/ssvp-sprint\.yaml`/);
    // What the rows say of the examples holds.
    expect(readFileSync(join(ROOT, 'examples', 'ssvp-travel.yaml'), 'utf8')).toMatch(/^sweeps: 5$/m);
    expect(readFileSync(join(ROOT, 'examples', 'ssvp-sprint.yaml'), 'utf8')).toMatch(/^departures: \['10 trials of full-broadcast/m);
  });
});
