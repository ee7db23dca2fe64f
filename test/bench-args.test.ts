import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** The benches whose command line goes through bench/lib/args.mjs (node:util's parseArgs). */
const BENCHES = readdirSync(join(ROOT, 'bench'))
  .filter((f) => f.endsWith('.mjs'))
  .filter((f) => readFileSync(join(ROOT, 'bench', f), 'utf8').includes("from './lib/args.mjs'"));

function bench(file: string, args: string[]) {
  return spawnSync(process.execPath, [join('bench', file), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
}

interface Outcome {
  file: string;
  args: string[];
  code: number | null;
  stdout: string;
  stderr: string;
  error: string | null;
}

// Every bench's --help, and a bad value, run in one node process (test/fixtures/bench-command-lines.mjs: each
// bench imported as `node bench/FILE ARGS` would run it, until it exits), so that the library the benches import
// loads once rather than once per bench. The unknown flag below runs a bench as a process of its own.
const CASES = [...BENCHES.map((f) => [f, '--help']), ['chains.mjs', '--runs', 'many']];
let outcomes: Outcome[] = [];
const outcome = (file: string, args: string[]) => {
  const o = outcomes.find((x) => x.file === file && x.args.join(' ') === args.join(' '));
  if (!o) throw new Error(`no outcome for ${file} ${args.join(' ')}`);
  expect(o.error, `${file} ${args.join(' ')}`).toBeNull();
  return o;
};
beforeAll(() => {
  const r = spawnSync(process.execPath, [join('test', 'fixtures', 'bench-command-lines.mjs'), JSON.stringify(CASES)], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  outcomes = JSON.parse(r.stdout);
});

describe('bench command lines', () => {
  it('at least the benches with flags parse them through bench/lib/args.mjs', () => {
    expect(BENCHES.length).toBeGreaterThanOrEqual(9);
  });

  for (const file of BENCHES) {
    it(`${file}: --help lists its flags and exits 0 before running anything`, () => {
      const help = outcome(file, ['--help']);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^usage: node bench/${file.replace('.', '\\.')}`));
      expect(help.stdout).toContain('--help');
    });
  }

  it('an unknown flag is one line naming the bench and the flag, exit 2, before running anything', () => {
    const bad = bench('scale.mjs', ['--no-such-flag']);
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^bench\/scale\.mjs: .*--no-such-flag.*--help/)]);
  });

  it('a bad value names the bench, the flag and what was expected', () => {
    const r = outcome('chains.mjs', ['--runs', 'many']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('bench/chains.mjs: --runs: expected an integer >= 1, got "many"');
  });
});
