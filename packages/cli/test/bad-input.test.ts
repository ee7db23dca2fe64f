import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RHEON6, panta, tempDir, writeSpec } from '../../../test/helpers.js';

const GOOD = `name: bad
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring, torus2d]
sizes: [16]
temperatures: [0.5]
seed: 1
`;

/** Each case: a spec edit, and what the one-line error must name (field and fix). */
const CASES: { name: string; spec: string; field: RegExp; fix: RegExp }[] = [
  { name: 'malformed YAML', spec: 'name: [unclosed\ngeometries: ring', field: /line \d+, column \d+/, fix: /fix: fix the YAML syntax/ },
  { name: 'unknown key', spec: `${GOOD}temprature: 3\n`, field: /temprature: unknown key/, fix: /fix: remove it or correct its spelling/ },
  { name: 'unknown geometry', spec: GOOD.replace('[ring, torus2d]', '[ring, hexagon]'), field: /geometries\[1\]/, fix: /ring.*torus2d|torus3d/ },
  { name: 'size 10 on torus2d', spec: GOOD.replace('sizes: [16]', 'sizes: [16, 10]'), field: /sizes\[1\]: N = 10 does not fit torus2d.*9 and 16/, fix: /fix: use a size that fits torus2d/ },
  { name: 'negative temperature', spec: GOOD.replace('[0.5]', '[0.5, -0.2]'), field: /temperatures\[1\]: -0.2 is too small/, fix: /fix: use a value of at least 0/ },
  { name: 'missing dataset', spec: GOOD.replace(RHEON6, 'nowhere/prompts.jsonl'), field: /dataset: dataset .*nowhere\/prompts.jsonl does not exist/, fix: /fix: correct the path/ },
  { name: 'unknown prompt id', spec: GOOD.replace('[fq117]', '[fq117, fq999]'), field: /prompts\[1\]: unknown prompt id "fq999"/, fix: /fix: use an id of the dataset \(fq117/ },
  { name: 'unknown protocol', spec: `${GOOD}protocol: [glauber, gossip]\n`, field: /protocol/, fix: /isolated.*ssvp.*belief-board.*drift-policy/ },
  { name: 'missing population file', spec: `${GOOD}population: {file: nobody.jsonl}\n`, field: /population\.file: population file .*nobody\.jsonl does not exist/, fix: /fix: correct the path/ },
  { name: 'ssvp encoder not in the sweep', spec: `${GOOD}ssvp: {encoder: minilm}\n`, field: /ssvp\.encoder: "minilm" is not one of the sweep's encoders/, fix: /fix: use one of hashing/ },
  { name: 'early stopping that can never settle', spec: `${GOOD}sweeps: 3\nearly_stopping: {window: 3}\n`, field: /early_stopping\.window: a run of 3 sweeps can never settle/, fix: /fix: use a smaller window/ },
  { name: 'a look-ahead too large to hold', spec: `${GOOD}lookahead: 99999999\n`, field: /lookahead: 99999999 is too big \(maximum 4194304\)/, fix: /fix: use a value of at most 4194304/ },
  { name: 'geometric annealing to zero', spec: `${GOOD}annealing: {to: 0, shape: geometric}\n`, field: /annealing\.to: a geometric schedule needs positive temperatures/, fix: /fix: use shape: linear/ },
];

describe('bad input: exit 2, one line naming file, field and fix, nothing written', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const dir = tempDir();
      const spec = writeSpec(dir, c.spec);
      const out = join(dir, 'out');
      const r = panta(['run', spec, '--out', out]);
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(spec);
      expect(lines[0]).toMatch(c.field);
      expect(lines[0]).toMatch(c.fix);
      expect(existsSync(out)).toBe(false);
      expect(r.stdout).toBe('');
    });
  }

  it('a malformed dataset line names the dataset file and line', () => {
    const dir = tempDir();
    const data = join(dir, 'prompts.jsonl');
    writeFileSync(data, '{"id": "a", "question": "q?", "accepted": ["x"], "false_premise": false}\n{"id": "b", "question": "q2?", "accepted": "x", "false_premise": false}\n');
    const spec = writeSpec(dir, GOOD.replace(RHEON6, data).replace('prompts: [fq117]\n', ''));
    const r = panta(['run', spec, '--out', join(dir, 'out')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/prompts\.jsonl: line 2: accepted: expected a list, got "x"; fix: write a list/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('a bad population line names the population file, the line and the fix', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'people.jsonl'), '{"id": "a", "persona": "A careful historian."}\n{"id": "b"}\n');
    const spec = writeSpec(dir, `${GOOD}population: {file: people.jsonl}\n`);
    const r = panta(['run', spec, '--out', join(dir, 'out')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/people\.jsonl: line 2: needs a persona or a belief; fix: give each line an id and a persona or a belief$/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('the scheduler refuses bad input the same way, before it touches Redis', () => {
    const dir = tempDir();
    const spec = writeSpec(dir, CASES[3]!.spec);
    // Nothing listens on port 1: reaching Redis at all would hang or fail differently.
    const r = panta(['scheduler', spec, '--redis', 'redis://127.0.0.1:1']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/sizes\[1\]: N = 10 does not fit torus2d/);
  });

  it('a missing spec and a bad flag are bad input too', () => {
    expect(panta(['run', '/nonexistent/spec.yaml']).code).toBe(2);
    expect(panta(['run', 'x.yaml', '--concurrency', 'zero']).code).toBe(2);
  });

  it('an edges geometry runs from its file, and a bad edge list names the file, the line and the fix', () => {
    const dir = tempDir();
    const ring = Array.from({ length: 12 }, (_, i) => `${i} ${(i + 1) % 12}`).join('\n');
    writeFileSync(join(dir, 'ring12.edges'), `# a ring of 12\n${ring}\n`);
    const spec = writeSpec(dir, GOOD.replace('[ring, torus2d]', '[{kind: edges, path: ring12.edges}]').replace('sizes: [16]', 'sizes: [12]').concat('sweeps: 1\n'));
    const ok = panta(['run', spec, '--out', join(dir, 'ok')]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/fq117\s+edges-ring12\s+12/);
    writeFileSync(join(dir, 'bad.edges'), '0 1\n1 two\n');
    const bad = panta(['run', writeSpec(dir, GOOD.replace('[ring, torus2d]', '[{kind: edges, path: bad.edges}]'), 'bad.yaml'), '--out', join(dir, 'bad')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toMatch(/bad\.edges: line 2: "two" is not a non-negative integer agent index; fix: write one undirected edge per line/);
    writeFileSync(join(dir, 'loop.edges'), '0 1\n1 1\n');
    const loop = panta(['run', writeSpec(dir, GOOD.replace('[ring, torus2d]', '[{kind: edges, path: loop.edges}]'), 'loop.yaml'), '--out', join(dir, 'loop')]);
    expect(loop.code).toBe(2);
    expect(loop.stderr.trim().split('\n')).toHaveLength(1);
    expect(loop.stderr).toMatch(/loop\.edges: .*self-loop/);
    expect(existsSync(join(dir, 'loop'))).toBe(false);
  });
});
