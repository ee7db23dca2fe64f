import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { ROOT } from './helpers.js';

/** examples/ssvp-travel.yaml cut to one trial per scenario (24 runs: `trial_prompts: every`), with absolute paths. */
export function travelExample(extra: Record<string, string> = {}): string {
  let text = readFileSync(join(ROOT, 'examples', 'ssvp-travel.yaml'), 'utf8')
    .replace('../datasets/', `${ROOT}/datasets/`)
    .replace('file: travel-roles.jsonl', `file: ${ROOT}/examples/travel-roles.jsonl`)
    .replace(/^out: .*$/m, '');
  for (const [from, to] of Object.entries({ 'trials: 30': 'trials: 1\ntrial_prompts: every', ...extra })) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  return text;
}
