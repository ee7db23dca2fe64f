import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RHEON6, ROOT, panta, tempDir, writeSpec, pantaInProcess as cli } from '../../../test/helpers.js';

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
  {
    name: 'unknown geometry',
    spec: GOOD.replace('[ring, torus2d]', '[ring, hexagon]'),
    field: /geometries\[1\]/,
    fix: /ring.*torus2d|torus3d/,
  },
  {
    name: 'size 10 on torus2d',
    spec: GOOD.replace('sizes: [16]', 'sizes: [16, 10]'),
    field: /sizes\[1\]: N = 10 does not fit torus2d.*9 and 16/,
    fix: /fix: use a size that fits torus2d/,
  },
  {
    name: 'negative temperature',
    spec: GOOD.replace('[0.5]', '[0.5, -0.2]'),
    field: /temperatures\[1\]: -0.2 is too small/,
    fix: /fix: use a value of at least 0/,
  },
  {
    name: 'missing dataset',
    spec: GOOD.replace(RHEON6, 'nowhere/prompts.jsonl'),
    field: /dataset: dataset .*nowhere\/prompts.jsonl does not exist/,
    fix: /fix: correct the path/,
  },
  {
    name: 'unknown prompt id',
    spec: GOOD.replace('[fq117]', '[fq117, fq999]'),
    field: /prompts\[1\]: unknown prompt id "fq999"/,
    fix: /fix: use an id of the dataset \(fq117/,
  },
  {
    name: 'unknown protocol',
    spec: `${GOOD}protocol: [glauber, gossip]\n`,
    field: /protocol/,
    fix: /isolated.*ssvp.*drift-policy.*belief-board/,
  },
  {
    name: 'missing population file',
    spec: `${GOOD}population: {file: nobody.jsonl}\n`,
    field: /population\.file: population file .*nobody\.jsonl does not exist/,
    fix: /fix: correct the path/,
  },
  {
    name: 'ssvp encoder not in the sweep',
    spec: `${GOOD}ssvp: {encoder: minilm}\n`,
    field: /ssvp\.encoder: "minilm" is not one of the sweep's encoders/,
    fix: /fix: use one of hashing/,
  },
  {
    name: 'early stopping that can never settle',
    spec: `${GOOD}sweeps: 3\nearly_stopping: {window: 3}\n`,
    field: /early_stopping\.window: a run of 3 sweeps can never settle/,
    fix: /fix: use a smaller window/,
  },
  {
    name: 'a look-ahead too large to hold',
    spec: `${GOOD}lookahead: 99999999\n`,
    field: /lookahead: 99999999 is too big \(maximum 4194304\)/,
    fix: /fix: use a value of at most 4194304/,
  },
  {
    name: 'geometric annealing to zero',
    spec: `${GOOD}annealing: {to: 0, shape: geometric}\n`,
    field: /annealing\.to: a geometric schedule needs positive temperatures/,
    fix: /fix: use shape: linear/,
  },
];

describe('bad input: exit 2, one line naming file, field and fix, nothing written', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const dir = tempDir();
      const spec = writeSpec(dir, c.spec);
      const out = join(dir, 'out');
      const r = await cli(['run', spec, '--out', out]);
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

  it('a malformed dataset line names the dataset file and line', async () => {
    const dir = tempDir();
    const data = join(dir, 'prompts.jsonl');
    writeFileSync(
      data,
      '{"id": "a", "question": "q?", "accepted": ["x"], "false_premise": false}\n{"id": "b", "question": "q2?", "accepted": "x", "false_premise": false}\n',
    );
    const spec = writeSpec(dir, GOOD.replace(RHEON6, data).replace('prompts: [fq117]\n', ''));
    const r = await cli(['run', spec, '--out', join(dir, 'out')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/prompts\.jsonl: line 2: accepted: expected a list, got "x"; fix: write a list/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('a prompt whose false answer is (inside) an accepted one is refused, naming the line, the prompt and the string', async () => {
    const dir = tempDir();
    const data = join(dir, 'prompts.jsonl');
    const spec = writeSpec(dir, TINY.replace(RHEON6, data).replace('prompts: [fq117]\n', ''));
    const ok = '{"id": "a", "question": "q?", "accepted": ["Paris"], "false_answers": ["Paris, Texas"], "false_premise": false}';
    writeFileSync(
      data,
      `${ok}\n{"id": "b", "question": "Where?", "accepted": ["New York City"], "false_answers": ["Boston", "new-york"], "false_premise": false}\n`,
    );
    expect(refused(await cli(['run', spec, '--out', join(dir, 'out')]))).toBe(
      `panta: ${data}: line 2: false_answers[1]: prompt b: the false answer "new-york" is inside the accepted answer "New York City", so every answer naming "New York City" would be judged not_known; fix: make the accepted and the false answers disjoint (remove it from false_answers, or reword it)`,
    );
    writeFileSync(data, `{"id": "c", "question": "q?", "accepted": ["42"], "false_answers": ["42"], "false_premise": false}\n`);
    expect(refused(await cli(['run', spec, '--out', join(dir, 'out')]))).toMatch(
      /line 1: false_answers\[0\]: prompt c: the false answer "42" is also an accepted answer/,
    );
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('a bad population line names the population file, the line and the fix', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'people.jsonl'), '{"id": "a", "persona": "A careful historian."}\n{"id": "b"}\n');
    const spec = writeSpec(dir, `${GOOD}population: {file: people.jsonl}\n`);
    const r = await cli(['run', spec, '--out', join(dir, 'out')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(
      /people\.jsonl: line 2: needs a persona or a belief; fix: give each line an id and a persona or a belief$/,
    );
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('the scheduler refuses bad input the same way, before it touches Redis', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, CASES[3].spec);
    // Nothing listens on port 1: reaching Redis at all would hang or fail differently.
    const r = await cli(['scheduler', spec, '--redis', 'redis://127.0.0.1:1']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/sizes\[1\]: N = 10 does not fit torus2d/);
  });

  it('a missing spec and a bad flag are bad input too', async () => {
    expect((await cli(['run', '/nonexistent/spec.yaml'])).code).toBe(2);
    expect((await cli(['run', 'x.yaml', '--concurrency', 'zero'])).code).toBe(2);
  });

  it('an edges geometry runs from its file, and a bad edge list names the file, the line and the fix', async () => {
    const dir = tempDir();
    /** `panta run` of the good spec on the edge list `lines`, written to NAME.edges; its corpus goes to NAME. */
    const runEdges = (name: string, lines: string, spec = (yaml: string) => yaml) => {
      writeFileSync(join(dir, `${name}.edges`), lines);
      const yaml = spec(GOOD.replace('[ring, torus2d]', `[{kind: edges, path: ${name}.edges}]`));
      return cli(['run', writeSpec(dir, yaml, `${name}.yaml`), '--out', join(dir, name)]);
    };
    const ring = Array.from({ length: 12 }, (_, i) => `${i} ${(i + 1) % 12}`).join('\n');
    const ok = await runEdges('ring12', `# a ring of 12\n${ring}\n`, (yaml) =>
      yaml.replace('sizes: [16]', 'sizes: [12]').concat('sweeps: 1\n'),
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/fq117\s+edges-ring12\s+12/);
    const bad = await runEdges('bad', '0 1\n1 two\n');
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toMatch(
      /bad\.edges: line 2: "two" is not a non-negative integer agent index; fix: write one undirected edge per line/,
    );
    const loop = await runEdges('loop', '0 1\n1 1\n');
    expect(loop.code).toBe(2);
    expect(loop.stderr.trim().split('\n')).toHaveLength(1);
    expect(loop.stderr).toMatch(/loop\.edges: .*self-loop/);
    expect(existsSync(join(dir, 'loop'))).toBe(false);
  });
});

/** Exit 2, exactly one line on stderr (returned), nothing on stdout. */
function refused(r: { code: number | null; stdout: string; stderr: string }): string {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(/^panta: [^\n]+\n$/);
  expect(r.stdout).toBe('');
  return r.stderr.trim();
}

const TINY = `name: gate
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [4]
temperatures: [0.5]
sweeps: 1
seed: 1
`;

describe('the gate: every check runs before the first byte is written', () => {
  it('a run too large to hold is refused at validation with the largest value that works, and the corrected spec then runs in the same folder', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const huge = refused(await cli(['run', writeSpec(dir, TINY.replace('sweeps: 1', 'sweeps: 1000000000000')), '--out', out]));
    expect(huge).toMatch(/sweeps: 1000000000000 is too big \(maximum 2097151\); fix: use a value of at most 2097151$/);
    const long = refused(
      await cli(['run', writeSpec(dir, TINY.replace('sweeps: 1', 'sweeps: 2000000').replace('[4]', '[1000]')), '--out', out]),
    );
    expect(long).toMatch(
      /sweeps: 2,000,000 sweeps of N = 1,000 \(ring\) make 2,000,001,000 events per run, more than a run can hold \(1,073,741,824\); fix: use at most 1,073,740 sweeps at this size/,
    );
    const graph = refused(
      await cli([
        'run',
        writeSpec(dir, TINY.replace('[ring]', '[{kind: random-regular, k: 100000}]').replace('[4]', '[100000]')),
        '--out',
        out,
      ]),
    );
    expect(graph).toMatch(
      /sizes\[0\]: N = 100,000 on random-regular-k100000 makes 10,000,000,000 neighbour entries \(N x k\), more than a graph can hold/,
    );
    const runs = refused(
      await cli(['run', writeSpec(dir, TINY.replace('prompts: [fq117]\n', '').concat('trials: 200000\n')), '--out', out]),
    );
    expect(runs).toMatch(/trials: the grid makes 1,200,000 runs .* more than a sweep can hold \(1,000,000\)/);
    const twice = refused(
      await cli(['run', writeSpec(dir, `${TINY}encoders: [{name: h, kind: hashing}, {name: h, kind: hashing, dim: 8}]\n`), '--out', out]),
    );
    expect(twice).toMatch(/encoders\[1\]: encoder name "h" is listed twice \(first at index 0\); fix: remove the repeated entry$/);
    expect(existsSync(out)).toBe(false);
    const ok = await cli(['run', writeSpec(dir, TINY), '--out', out]);
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("an edge list must agree with the spec's sizes: an index past N names the line, a file with fewer agents names the file", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'ring12.edges'),
      `# a ring of 12\n${Array.from({ length: 12 }, (_, i) => `${i} ${(i + 1) % 12}`).join('\n')}\n`,
    );
    const edges = TINY.replace('[ring]', '[{kind: edges, path: ring12.edges}]');
    const small = refused(await cli(['run', writeSpec(dir, edges.replace('[4]', '[10]')), '--out', join(dir, 'a')]));
    expect(small).toMatch(
      /ring12\.edges: line 11: agent 10 is out of range for N = 10 \(sizes\[0\] in .*spec\.yaml\); fix: use agent indices 0\.\.9, or make sizes\[0\] 12/,
    );
    const large = refused(await cli(['run', writeSpec(dir, edges.replace('[4]', '[16]')), '--out', join(dir, 'b')]));
    expect(large).toMatch(
      /ring12\.edges: names agents 0\.\.11 only \(N = 12\), but sizes\[0\] in .*spec\.yaml is 16; fix: make sizes\[0\] 12.*or add edges for agents 12\.\.15$/,
    );
    const mapped = refused(
      await cli([
        'run',
        writeSpec(
          dir,
          edges
            .replace('[ring]', '[ring, {kind: edges, path: ring12.edges}]')
            .replace('sizes: [4]', 'sizes: {ring: [4], edges-ring12: [16]}'),
        ),
        '--out',
        join(dir, 'c'),
      ]),
    );
    expect(mapped).toMatch(/but sizes\.edges-ring12\[0\] in .*spec\.yaml is 16/);
    expect(readdirSync(dir).sort()).toEqual(['ring12.edges', 'spec.yaml']);
    const ok = await cli(['run', writeSpec(dir, edges.replace('[4]', '[12]')), '--out', join(dir, 'ok')]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/fq117\s+edges-ring12\s+12/);
  });

  it('an output folder that cannot be one is refused with the real cause: empty, a file, under a file, where no folder can be made', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, TINY);
    writeFileSync(join(dir, 'afile'), 'x');
    expect(refused(await cli(['run', spec, '--out', '']))).toBe('panta: run: --out: an empty path; fix: give a folder, e.g. runs/mine');
    expect(refused(await cli(['run', spec, '--out', '--seed']))).toMatch(/^panta: run: --out: "--seed" looks like an option, not a path/);
    expect(refused(await cli(['run', spec, '--out', join(dir, 'afile')]))).toBe(
      `panta: ${join(dir, 'afile')}: is a file, not a folder; fix: choose another --out, or move that file away`,
    );
    expect(refused(await cli(['run', spec, '--out', join(dir, 'afile', 'sub', 'out')]))).toMatch(
      /afile\/sub\/out: cannot be made: .*afile is a file, not a folder; fix: /,
    );
    // /proc refuses new folders to anyone, root included (its mkdir answers ENOENT, on which a recursive mkdir never returns).
    expect(refused(await cli(['run', spec, '--out', '/proc/panta-gate/out']))).toBe(
      'panta: /proc/panta-gate/out: cannot be made (the file system at /proc does not allow new folders); fix: choose an --out in a folder you can write to',
    );
    expect(readFileSync(join(dir, 'afile'), 'utf8')).toBe('x');
    expect(readdirSync(dir).sort()).toEqual(['afile', 'spec.yaml']);
  });

  it('an output folder that is not empty and holds no corpus is refused naming what is there; --force writes there, and the corpus then resumes without it', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, TINY);
    const out = join(dir, 'mine');
    mkdirSync(join(out, 'events'), { recursive: true });
    writeFileSync(join(out, 'events', 'theirs.parquet'), 'not ours');
    writeFileSync(join(out, 'notes.txt'), 'x');
    expect(refused(await cli(['run', spec, '--out', out]))).toBe(
      `panta: ${out}: is not empty and holds no Panta corpus (events, notes.txt); fix: choose a new or empty --out, or add --force to write the corpus among these files`,
    );
    expect(readdirSync(out).sort()).toEqual(['events', 'notes.txt']);
    expect(readdirSync(join(out, 'events'))).toEqual(['theirs.parquet']);
    const forced = await cli(['run', spec, '--out', out, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('x');
    // Its own corpus now: a rerun needs no --force (nothing left to run).
    const again = await cli(['run', spec, '--out', out]);
    expect(again.code, again.stderr).toBe(0);
    // An empty folder is the corpus's to take.
    mkdirSync(join(dir, 'empty'));
    expect((await cli(['run', spec, '--out', join(dir, 'empty')])).code).toBe(0);
  });

  it('an output folder inside a read-only folder is refused as such, not as ENOENT (the binary, as an unprivileged user)', () => {
    const dir = tempDir();
    const spec = writeSpec(dir, TINY);
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    chmodSync(dir, 0o755);
    chmodSync(spec, 0o644);
    // Root ignores permissions: the binary runs as nobody then (anyone else is refused by the mode itself).
    const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const r = spawnSync(process.execPath, [join(ROOT, 'packages', 'cli', 'bin', 'panta.js'), 'run', spec, '--out', join(locked, 'out')], {
      encoding: 'utf8',
      cwd: dir,
      ...asUser,
    });
    expect(refused({ code: r.status, stdout: r.stdout, stderr: r.stderr })).toBe(
      `panta: ${join(locked, 'out')}: cannot be written (permission denied at ${locked}); fix: choose an --out in a folder you can write to`,
    );
    expect(readdirSync(locked)).toEqual([]);
  });

  it('bytes that are not UTF-8 in a dataset, a population file or the spec are one line naming the file, the byte offset and its line', async () => {
    const dir = tempDir();
    const good = '{"id": "a", "question": "Qui était Élodie?", "accepted": ["x"], "false_premise": false}\n';
    const data = join(dir, 'prompts.jsonl');
    // Latin-1 "é" (0xe9) on line 2, at byte offset (the first line in bytes) + 28.
    const line2 = Buffer.concat([
      Buffer.from('{"id": "b", "question": "Caf'),
      Buffer.from([0xe9]),
      Buffer.from('?", "accepted": ["y"], "false_premise": false}\n'),
    ]);
    writeFileSync(data, Buffer.concat([Buffer.from(good), line2]));
    const at = Buffer.byteLength(good) + 28;
    const spec = writeSpec(dir, TINY.replace(RHEON6, data).replace('prompts: [fq117]\n', ''));
    expect(refused(await cli(['run', spec, '--out', join(dir, 'out')]))).toBe(
      `panta: ${data}: byte ${at} (line 2): 0xe9 is not UTF-8 (the text would be changed on reading); fix: save the file as UTF-8`,
    );
    writeFileSync(
      join(dir, 'people.jsonl'),
      Buffer.concat([Buffer.from('{"id": "p", "persona": "A '), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]),
    );
    expect(
      refused(await cli(['run', writeSpec(dir, `${TINY}population: {file: people.jsonl}\n`, 'pop.yaml'), '--out', join(dir, 'out')])),
    ).toMatch(/people\.jsonl: byte 26 \(line 1\): 0xc3 is not UTF-8 .*; fix: save the file as UTF-8$/);
    const latin = join(dir, 'latin.yaml');
    writeFileSync(
      latin,
      Buffer.concat([
        Buffer.from(TINY.replace('name: gate', 'name: gate-')),
        Buffer.from('# r'),
        Buffer.from([0xe9, 0x73]),
        Buffer.from('um\n'),
      ]),
    );
    expect(refused(await cli(['run', latin, '--out', join(dir, 'out')]))).toMatch(/latin\.yaml: byte \d+ \(line 9\): 0xe9 is not UTF-8/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    // Valid UTF-8 (accents, a byte-order mark-free emoji) is read as written.
    writeFileSync(data, `${good}{"id": "b", "question": "Café 🙂?", "accepted": ["y"], "false_premise": false}\n`);
    expect((await cli(['plan', spec])).code).toBe(0);
  });

  it('a spec or a dataset that is a folder is named as such', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'data'));
    expect(refused(await cli(['run', dir]))).toBe(
      `panta: ${dir}: the sweep spec is a folder, not a file; fix: give the path of a YAML sweep spec, e.g. examples/quickstart.yaml`,
    );
    const spec = writeSpec(dir, TINY.replace(RHEON6, 'data'));
    expect(refused(await cli(['run', spec, '--out', join(dir, 'out')]))).toMatch(
      /spec\.yaml: dataset: dataset .*\/data is a folder, not a file; fix: correct the path/,
    );
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it("a base_url that is not http(s) is refused at validation, for the agents' backend and the judge's", async () => {
    const dir = tempDir();
    const agents = refused(
      await cli(['run', writeSpec(dir, `${TINY}backend: {kind: openai, base_url: "ftp://x/v1", model: m}\n`), '--out', join(dir, 'a')]),
    );
    expect(agents).toMatch(
      /backend\.base_url: "ftp:\/\/x\/v1" is not an http:\/\/ or https:\/\/ URL; fix: write an http:\/\/ or https:\/\/ URL/,
    );
    const judge = refused(
      await cli([
        'run',
        writeSpec(dir, `${TINY}judge: {kind: llm, backend: {kind: anthropic, base_url: "file:///etc", model: m}}\n`),
        '--out',
        join(dir, 'b'),
      ]),
    );
    expect(judge).toMatch(/judge\.backend\.base_url: "file:\/\/\/etc" is not an http:\/\/ or https:\/\/ URL/);
    const listed = refused(
      await cli([
        'run',
        writeSpec(dir, `${TINY}backend: {kind: openai, base_url: ["http://a:8000/v1", "ws://b/v1"], model: m}\n`),
        '--out',
        join(dir, 'c'),
      ]),
    );
    expect(listed).toMatch(/backend\.base_url\[1\]: "ws:\/\/b\/v1" is not an http/);
    expect(readdirSync(dir)).toEqual(['spec.yaml']);
  });

  it('a YAML bomb (billion laughs) is refused as bad input naming the file', async () => {
    const dir = tempDir();
    const levels = ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefgh'[i]}`).join(',')}]`);
    const spec = writeSpec(dir, `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n${levels.join('\n')}\n`);
    expect(refused(await cli(['run', spec, '--out', join(dir, 'out')]))).toMatch(
      new RegExp(`^panta: ${spec}: its aliases \\(\\*name\\) expand too far .*; fix: write the values out, or use fewer aliases$`),
    );
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it("numeric options are held to the spec's bounds (or their own), for every command", async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, TINY);
    const out = join(dir, 'out');
    expect(refused(await cli(['run', spec, '--out', out, '--concurrency', '1000000000']))).toBe(
      'panta: run: --concurrency: 1000000000 is too big (maximum 65536); fix: use a value of at most 65536',
    );
    expect(refused(await cli(['run', spec, '--out', out, '--concurrency', '2.5']))).toBe(
      'panta: run: --concurrency: 2.5 is not an integer; fix: write an integer',
    );
    expect(refused(await cli(['run', spec, '--out', out, '--seed', '9007199254740992']))).toMatch(
      /^panta: run: --seed: 9007199254740992 is too big \(maximum 9007199254740991\)/,
    );
    expect(refused(await cli(['scheduler', spec, '--concurrency', '65537']))).toMatch(
      /^panta: scheduler: --concurrency: 65537 is too big \(maximum 65536\)/,
    );
    expect(refused(await cli(['worker', '--concurrency', '0']))).toBe(
      'panta: worker: --concurrency: 0 is too small (minimum 1); fix: use a value of at least 1',
    );
    expect(refused(await cli(['worker', '--base-url', 'http://a:8000/v1,,http://b:8000/v1']))).toBe(
      'panta: worker: --base-url: "http://a:8000/v1,,http://b:8000/v1" has an empty URL; fix: separate URLs with single commas',
    );
    expect(refused(await cli(['worker', '--base-url', 'http://a:8000/v1,ftp://b']))).toMatch(
      /^panta: worker: --base-url: "ftp:\/\/b" is not an http:\/\/ or https:\/\/ URL; fix: /,
    );
    expect(refused(await cli(['worker', '--lock-ms', '1e12']))).toMatch(
      /^panta: worker: --lock-ms: 1e12 is too big \(maximum 2147483647\)/,
    );
    expect(refused(await cli(['collector', '--durable-ms', 'soon']))).toBe(
      'panta: collector: --durable-ms: "soon" is not a number; fix: write a number',
    );
    expect(refused(await cli(['serve-surrogate', '--port', '70000']))).toMatch(
      /^panta: serve-surrogate: --port: 70000 is too big \(maximum 65535\)/,
    );
    expect(refused(await cli(['serve-surrogate', '--fault-rate', '1.5']))).toMatch(
      /^panta: serve-surrogate: --fault-rate: 1\.5 is too big \(maximum 1\)/,
    );
    expect(refused(await cli(['dashboard', '--port', '-1']))).toMatch(/^panta: dashboard: --port: -1 is too small \(minimum 0\)/);
    expect(refused(await cli(['models', 'check', dir, '--threads', '0']))).toMatch(
      /^panta: models check: --threads: 0 is too small \(minimum 1\)/,
    );
    expect(refused(await cli(['run', spec, '--out', out, '--log-level', 'loud']))).toBe(
      'panta: run: --log-level: "loud" is not allowed; fix: use one of trace, debug, info, warn, error, fatal, silent',
    );
    expect(existsSync(out)).toBe(false);
  });

  it('a damaged manifest in the output folder is named, with what to do, and left as it is', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    mkdirSync(out);
    const text =
      '{"format": "panta-corpus/1", "name": "gate", "status": "running", "fingerprint": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "spec_fi';
    writeFileSync(join(out, 'manifest.json'), text);
    const line = refused(await cli(['run', writeSpec(dir, TINY), '--out', out]));
    expect(line).toMatch(
      new RegExp(
        `^panta: ${out}/manifest\\.json: unreadable manifest: not valid JSON \\(.*\\); fix: restore ${out}/manifest\\.json to resume the sweep, or choose another --out \\(or delete ${out} to start over\\)$`,
      ),
    );
    expect(readdirSync(out)).toEqual(['manifest.json']);
    expect(readFileSync(join(out, 'manifest.json'), 'utf8')).toBe(text);
  });

  it('a corpus of another format (an older Panta, whose shards lack columns) is refused for resuming, naming both formats, and left as it is', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    mkdirSync(out);
    const text = `${JSON.stringify({ format: 'panta-corpus/1', name: 'gate', status: 'running', fingerprint: '0'.repeat(64) })}\n`;
    writeFileSync(join(out, 'manifest.json'), text);
    const line = refused(await cli(['run', writeSpec(dir, TINY), '--out', out]));
    expect(line).toBe(
      `panta: ${out}/manifest.json: format: the corpus was written in format "panta-corpus/1", and this Panta writes panta-corpus/2; fix: finish it with the Panta version that started it, or choose another --out (or delete ${out} to start over)`,
    );
    expect(readdirSync(out)).toEqual(['manifest.json']);
    expect(readFileSync(join(out, 'manifest.json'), 'utf8')).toBe(text);
  });

  it('values out of bounds give the real bound; non-integers, .nan and .inf are named; a repeated entry or key is blamed on its own key', async () => {
    const dir = tempDir();
    const cases: [string, string, string][] = [
      ['sizes: [4]', 'sizes: [0]', 'sizes[0]: 0 is too small (minimum 1); fix: use a value of at least 1'],
      ['seed: 1', 'seed: 1\nconcurrency: 0', 'concurrency: 0 is too small (minimum 1); fix: use a value of at least 1'],
      ['seed: 1', 'seed: 1\nmax_tokens: 0', 'max_tokens: 0 is too small (minimum 1); fix: use a value of at least 1'],
      ['sweeps: 1', 'sweeps: 1.5', 'sweeps: 1.5 is not an integer; fix: write an integer'],
      ['[0.5]', '[0.5, .nan]', 'temperatures[1]: .nan is not a finite number; fix: write a finite number'],
      ['seed: 1', 'seed: 1\nconcurrency: .inf', 'concurrency: .inf is not a finite number; fix: write a finite number'],
      ['[0.5]', '[0.5, -.inf]', 'temperatures[1]: -.inf is not a finite number; fix: write a finite number'],
      ['[fq117]', '[fq117, fq367, fq117]', 'prompts[2]: "fq117" is listed twice (first at index 0); fix: remove the repeated entry'],
      ['[0.5]', '[0.5, 1.3, 0.5]', 'temperatures[2]: 0.5 is listed twice (first at index 0); fix: remove the repeated entry'],
      [
        '[ring]',
        '[ring, torus2d, ring]',
        'geometries[2]: geometry ring is listed twice (first at index 0); fix: remove the repeated entry',
      ],
      [
        'seed: 1',
        'seed: 1\ntemperatures: [0.7]',
        'line 9, column 1: temperatures: the key is given twice (first on line 6); fix: keep one of them (a list holds several values: [a, b])',
      ],
    ];
    for (const [from, to, message] of cases) {
      const spec = writeSpec(dir, TINY.replace(from, to));
      expect(refused(await cli(['run', spec, '--out', join(dir, 'out')]))).toBe(`panta: ${spec}: ${message}`);
    }
    expect(readdirSync(dir)).toEqual(['spec.yaml']);
  });

  it('a usage error is one line and a pointer to --help, exit 2 (the binary, then in-process)', async () => {
    const missing = panta(['run']);
    expect(refused(missing)).toBe('panta: run: missing argument <spec>; see panta run --help');
    expect(refused(await cli(['runn', 'x.yaml']))).toBe("panta: unknown command 'runn' (did you mean run?); see panta --help");
    expect(refused(await cli(['run', 'x.yaml', '--colour']))).toBe("panta: run: unknown option '--colour'; see panta run --help");
    expect(refused(await cli(['models', 'check']))).toBe('panta: models check: missing argument <dir>; see panta models check --help');
  });

  it('--version prints the package version', () => {
    const r = panta(['--version']);
    expect(r.code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string };
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });
});
