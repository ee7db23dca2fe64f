import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { drawPrompts } from '@panta/core';
import { readManifest, verifyCorpus, writeManifest } from '@panta/corpus';
import { loadSweep, runSweep } from '@panta/engine';
import { ROOT, tempDir, writeSpec } from './helpers.js';

const EXAMPLE = join(ROOT, 'examples', 'ssvp-travel.yaml');

/** The example with absolute paths and the given replacements. */
function example(replace: Record<string, string>): string {
  let text = readFileSync(EXAMPLE, 'utf8')
    .replace('../datasets/', `${ROOT}/datasets/`)
    .replace('file: travel-roles.jsonl', `file: ${ROOT}/examples/travel-roles.jsonl`)
    .replace(/^out: .*$/m, '');
  for (const [from, to] of Object.entries(replace)) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  return text;
}

describe('examples/ssvp-travel.yaml plans the SSVP paper’s design (Hallucination as Context Drift, 4.1 and 4.5)', () => {
  it('6 steps per trial: each role answers 6 times (the paper’s 3 x 6 = 18 task calls of no-sync)', () => {
    const { runs } = loadSweep(EXAMPLE);
    for (const r of runs) expect(r.sweeps + 1).toBe(6);
    expect(readFileSync(join(ROOT, 'docs', 'travel.md'), 'utf8')).toMatch(/`sweeps: 5`/);
  });

  it('30 trials per condition, the scenario drawn at random per trial (seeded; every arm’s trial k runs the same scenario)', () => {
    const { runs } = loadSweep(EXAMPLE);
    const arms = ['no-sync', 'full-broadcast', 'ssvp'];
    for (const arm of arms) {
      const own = runs.filter((r) => r.protocol === arm);
      expect(own.map((r) => r.trial).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_x, i) => i));
    }
    const scenarioOf = (arm: string, trial: number) => runs.find((r) => r.protocol === arm && r.trial === trial)!.prompt.id;
    for (let t = 0; t < 30; t++) expect(new Set(arms.map((a) => scenarioOf(a, t))).size).toBe(1);
    // Uniform over the 8 scenarios: 30 trials draw several of them, and the draw is the seed's alone.
    const drawn = new Set(runs.map((r) => r.prompt.id));
    expect(drawn.size).toBeGreaterThanOrEqual(5);
    expect(drawPrompts(21, 30, 8)).toEqual(drawPrompts(21, 30, 8));
    expect(drawPrompts(21, 30, 8)).not.toEqual(drawPrompts(22, 30, 8));
    // Over many trials each scenario is drawn about equally often.
    const counts = new Array(8).fill(0);
    for (const i of drawPrompts(21, 8000, 8)) counts[i]++;
    for (const c of counts) expect(Math.abs(c - 1000)).toBeLessThan(120);
  });

  it('the old layout, 30 trials per scenario (240 per arm), is the explicit option trial_prompts: every', () => {
    const dir = tempDir();
    const { runs } = loadSweep(writeSpec(dir, example({ 'trials: 30': 'trials: 30\ntrial_prompts: every' }), 'every.yaml'));
    expect(runs.filter((r) => r.protocol === 'ssvp').length).toBe(240);
    // A dataset whose prompts are not scenarios keeps every prompt per trial by default: each configuration has every trial.
    const rheon = loadSweep(join(ROOT, 'examples', 'quickstart.yaml'));
    const configs = new Set(rheon.runs.map((r) => r.configId));
    expect(new Set(rheon.runs.map((r) => r.prompt.id)).size).toBeGreaterThan(1);
    expect(rheon.runs.length).toBe(configs.size * rheon.spec.trials);
  });

  it('a corpus keeps the layout it was planned with: one written before trial_prompts (no key, every) verifies, and today’s YAML is refused on it', async () => {
    const dir = tempDir();
    const small = {
      'trials: 30': 'trials: 1\nprompts: [travel-barcelona, travel-tokyo]',
      'sweeps: 5': 'sweeps: 1',
      'protocol: [no-sync, full-broadcast, ssvp]': 'protocol: no-sync',
    };
    const old = join(dir, 'old');
    const oldSpec = writeSpec(
      dir,
      example({ ...small, 'trials: 30': 'trials: 1\ntrial_prompts: every\nprompts: [travel-barcelona, travel-tokyo]' }),
      'old.yaml',
    );
    expect((await runSweep(oldSpec, { out: old, logLevel: 'silent' })).status).toBe('complete');
    // As a corpus from before the key: its stored spec has none.
    const manifest = readManifest(old)!;
    expect((manifest.spec as { trial_prompts?: string }).trial_prompts).toBe('every');
    delete (manifest.spec as { trial_prompts?: string }).trial_prompts;
    writeManifest(old, manifest);
    expect((await verifyCorpus(old)).problems).toEqual([]);
    // Today's YAML (no key) plans drawn trials: another corpus, refused, never mixed into the old one.
    const today = writeSpec(dir, example(small), 'today.yaml');
    await expect(runSweep(today, { out: old, logLevel: 'silent' })).rejects.toThrow(/holds a corpus of a different sweep/);
    // A new corpus stores the layout it resolved, and verifies.
    const fresh = join(dir, 'fresh');
    expect((await runSweep(today, { out: fresh, logLevel: 'silent' })).status).toBe('complete');
    expect((readManifest(fresh)!.spec as { trial_prompts?: string }).trial_prompts).toBe('drawn');
    expect((await verifyCorpus(fresh)).problems).toEqual([]);
  }, 60_000);
});
