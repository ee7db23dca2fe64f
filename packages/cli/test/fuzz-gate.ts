import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RHEON6, pantaInProcess, tempDir } from '../../../test/helpers.js';

/**
 * The input gate, by property: whatever the spec or the command line, `panta` either exits 0 with a corpus
 * that `panta verify` passes, or exits 2 with exactly one line on stderr and nothing written. Cases mutate a
 * tiny valid sweep (surrogate, ring of 4, one sweep, one prompt): types, bounds, paths, YAML structure,
 * options and their values. The CLI runs in-process (pantaInProcess), so a refused case costs a few ms and an
 * accepted one a full sweep and a verify (0.3-0.4 s on an idle machine): every accepted case is run to the end.
 *
 * The properties are split over test files (fuzz.test.ts, fuzz-spec.test.ts, fuzz-argv.test.ts), so that they
 * run side by side on Vitest's workers; each file calls describeGate with its share of the cases.
 *
 * One seed per test run, in the test names: FUZZ_SEED=<seed> replays exactly the same cases (a file's spec
 * cases are drawn from the seed plus its part number).
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
/** Spec mutations of all the parts together, and command lines. */
export const SPEC_CASES = 650;
const ARGV_CASES = 350;

let root: string;
/** Fixture paths, absolute, shared by every case (a case must leave each unchanged when it exits 2). */
const F = {} as Record<
  'ring4' | 'badEdges' | 'loopEdges' | 'people' | 'afile' | 'folder' | 'empty' | 'damaged' | 'underFile' | 'corpus',
  string
>;

/** The fixture files and the finished corpus every case of a file reads, made before its first case. */
async function makeFixtures(): Promise<void> {
  root = tempDir('panta-fuzz-');
  F.ring4 = join(root, 'ring4.edges');
  writeFileSync(F.ring4, '0 1\n1 2\n2 3\n3 0\n');
  F.badEdges = join(root, 'bad.edges');
  writeFileSync(F.badEdges, '0 1\n1 9\n');
  F.loopEdges = join(root, 'loop.edges');
  writeFileSync(F.loopEdges, '0 1\n2 2\n');
  F.people = join(root, 'people.jsonl');
  writeFileSync(F.people, '{"id": "a", "persona": "A careful historian."}\n{"id": "b", "belief": "The answer is 42."}\n');
  F.afile = join(root, 'afile');
  writeFileSync(F.afile, 'not a folder\n');
  F.folder = join(root, 'folder');
  mkdirSync(F.folder);
  // An empty folder no generated command writes into (the spec and argv cases may give F.folder as --out, and a
  // corpus written there would make the command cases' folder a corpus, as some seeds did).
  F.empty = join(root, 'empty');
  mkdirSync(F.empty);
  F.damaged = join(root, 'damaged');
  mkdirSync(F.damaged);
  writeFileSync(join(F.damaged, 'manifest.json'), '{"format": "panta-corpus/1", "name": "fuzz", "status": "running", "fingerp');
  F.underFile = join(F.afile, 'sub');
  // A finished corpus, for the commands that read one (embed, judge, annotate, calibrate-tau, merge, publish).
  F.corpus = join(root, 'corpus');
  const spec = join(root, 'corpus.yaml');
  writeFileSync(spec, stringify(BASE));
  if ((await pantaInProcess(['run', spec, '--out', F.corpus])).code !== 0) throw new Error('the fixture corpus did not run');
}

const BASE = {
  name: 'fuzz',
  dataset: RHEON6,
  prompts: ['fq117'],
  geometries: ['ring'],
  sizes: [4],
  temperatures: [0.5],
  sweeps: 1,
  seed: 1,
  encoders: [{ name: 'h', kind: 'hashing', dim: 8 }],
  concurrency: 4,
};

/** Paths a spec may name: good, missing, a folder, a file of the wrong kind, under a file, empty, a device. */
const paths = () => [RHEON6, 'missing.jsonl', F.folder, F.afile, F.underFile, F.people, F.ring4, '', '/dev/null', '/proc/self/status'];

const WILD: unknown[] = [
  0,
  -1,
  1,
  1.5,
  1e12,
  2 ** 53 + 2,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  '',
  'x',
  '4',
  'ring',
  true,
  false,
  null,
  [],
  {},
  [1, 'a'],
  { kind: 'x' },
];

/** For each key: values worth trying there, valid and not (valid ones keep the sweep tiny). */
const CANDIDATES: Record<string, () => unknown[]> = {
  name: () => ['fuzz2', '', 'a b', 'x/y', 5],
  dataset: paths,
  prompts: () => [['fq117'], ['fq117', 'fq367'], ['nope'], [], 'fq117', [1], ['fq117', 'fq117']],
  geometries: () => [
    ['ring'],
    ['torus2d'],
    ['hexagon'],
    [],
    'ring',
    ['ring', 'ring'],
    ['star'],
    ['chain'],
    ['meanfield'],
    [{ kind: 'edges', path: F.ring4 }],
    [{ kind: 'edges', path: F.badEdges }],
    [{ kind: 'edges', path: F.loopEdges }],
    [{ kind: 'edges', path: F.folder }],
    [{ kind: 'random-regular', k: 3 }],
    [{ kind: 'random-regular' }],
    [{ kind: 'small-world', k: 2, beta: 0.1 }],
    [{ kind: 'small-world', k: 3, beta: 2 }],
    [{ kind: 'meanfield', sample: 2 }],
    [{ kind: 'meanfield', sample: 9 }],
    [{ kind: 'torus2d', x: 1 }],
    [{ kind: 'random-regular', k: 1e6 }],
  ],
  sizes: () => [
    [4],
    [3],
    [9],
    [0],
    [-4],
    [4.5],
    [1e12],
    [2 ** 31],
    [4, 4],
    [],
    { ring: [4] },
    { hexagon: [4] },
    4,
    '4',
    [Number.NaN],
    [5000, 4],
  ],
  temperatures: () => [[0], [0.1, 1.3], [-1], [Number.NaN], [Number.POSITIVE_INFINITY], [], [0.5, 0.5], 0.5, ['hot'], [1e308]],
  trials: () => [1, 2, 0, -1, 1.5, 1e7, Number.NaN, '2'],
  sweeps: () => [1, 2, 0, 1e12, 2 ** 53, -1, 2.5, Number.POSITIVE_INFINITY, 536_870_911],
  seed: () => [0, 7, -1, 1.5, 2 ** 53, 1e300, 'seven'],
  dynamics: () => ['asynchronous', 'synchronous', 'chaotic', 1, ['asynchronous', 'synchronous'], [], ['synchronous', 'synchronous']],
  protocol: () => [
    'glauber',
    'isolated',
    'ssvp',
    'belief-board',
    'drift-policy',
    ['glauber', 'isolated'],
    ['glauber', 'glauber'],
    'gossip',
    [],
  ],
  backend: () => [
    { kind: 'surrogate' },
    { kind: 'surrogate', coupling: -1 },
    { kind: 'surrogate', coupling: 1e308 },
    { kind: 'surrogate', latency_ms: 1e12 },
    { kind: 'surrogate', field: { correct: Number.NaN } },
    { kind: 'surrogate', premise_bias: 5, belief: -3 },
    { kind: 'openai', base_url: 'ftp://x/v1', model: 'm' },
    { kind: 'openai', base_url: 'http://127.0.0.1:1/v1' },
    { kind: 'openai', model: 'm' },
    { kind: 'anthropic', base_url: 'file:///x', model: 'm' },
    { kind: 'vllm' },
    'surrogate',
    { kind: 'openai', base_url: [], model: 'm' },
    { kind: 'openai', base_url: 'http://127.0.0.1:1/v1', model: 'm', timeout_ms: 0 },
  ],
  encoders: () => [
    [{ name: 'h', kind: 'hashing', dim: 8 }],
    [
      { name: 'h', kind: 'hashing', dim: 8 },
      { name: 'g', kind: 'hashing', dim: 16 },
    ],
    [
      { name: 'h', kind: 'hashing' },
      { name: 'h', kind: 'hashing' },
    ],
    [{ name: 'H', kind: 'hashing' }],
    [{ name: 'h', kind: 'hashing', dim: 4 }],
    [{ name: 'h', kind: 'hashing', dim: 1e6 }],
    [{ name: 'm', kind: 'onnx', path: F.folder }],
    [{ name: 'm', kind: 'onnx', path: 'missing' }],
    [{ name: 'm', kind: 'onnx', path: F.afile }],
    [],
    [{ name: 'h' }],
  ],
  judge: () => [
    { kind: 'reference' },
    { kind: 'llm' },
    { kind: 'llm', backend: { kind: 'openai', base_url: 'ftp://x/v1', model: 'm' } },
    { kind: 'oracle' },
    'reference',
  ],
  template: () => [...paths(), ['rheon-a2', 'panta-v1'], [], ['rheon-a2', 'x/rheon-a2.yaml'], ['panta-v1', 'missing.yaml']],
  max_tokens: () => [1, 100, 0, -5, 1.5, 1e15, 2 ** 53],
  fixed_length: () => [true, false, 'yes'],
  whitening: () => ['zca', 'raw', 'pca', { from: F.folder }, { from: F.damaged }, { from: '' }, { from: F.afile }],
  concurrency: () => [1, 3, 65_536, 0, 65_537, 1e9, 2.5],
  lookahead: () => [16, 4_194_304, 15, 4_194_305, 1e12],
  ssvp: () => [{}, { tau: 0.5 }, { tau: 3 }, { encoder: 'h' }, { encoder: 'nope' }, { tau: Number.NaN }],
  population: () => [
    { file: F.people },
    { file: F.people, assign: 'same' },
    { file: F.people, assign: 'fraction', fraction: 0.5 },
    { file: 'missing.jsonl' },
    { file: F.folder },
    { file: RHEON6 },
    { file: F.people, fraction: 2 },
    { file: F.people, assign: 'all' },
    [{ name: 'none' }, { file: F.people, assign: 'same' }],
    [{}, {}],
    [],
    [{ name: 'a b', file: F.people }],
    [{ file: 'missing.jsonl' }],
  ],
  annealing: () => [{ to: 0.1 }, { to: 0, shape: 'geometric' }, { to: 1, shape: 'geometric' }, { to: -1 }, { shape: 'cubic', to: 1 }],
  early_stopping: () => [{}, { window: 1, min_sweeps: 1 }, { window: 5 }, { tolerance: 0 }, { window: 0 }],
  drift: () => [{}, { tolerance: 'auto' }, { tolerance: 0.1 }, { tolerance: 2 }, { tolerance: 'none' }],
  out: () => ['', 'elsewhere'],
  temprature: () => [1],
  Sizes: () => [[4]],
};

/** Values that keep the sweep valid and tiny, so that about a fifth of the cases reach a corpus. */
const VALID: Record<string, () => unknown[]> = {
  name: () => ['fuzz2', 'a.b_c-d'],
  prompts: () => [['fq117', 'fq367'], ['fq367']],
  geometries: () => [
    ['ring'],
    ['chain'],
    ['star'],
    ['meanfield'],
    [{ kind: 'edges', path: F.ring4 }],
    [{ kind: 'random-regular', k: 3 }],
    [{ kind: 'small-world', k: 2, beta: 0.1 }],
    [{ kind: 'meanfield', sample: 2 }],
  ],
  sizes: () => [[4], [3, 4], { ring: [4], chain: [3] }],
  temperatures: () => [[0], [0.1, 1.3], [1e308]],
  trials: () => [2],
  sweeps: () => [2, 3],
  seed: () => [0, Number.MAX_SAFE_INTEGER],
  dynamics: () => ['synchronous', ['asynchronous', 'synchronous']],
  template: () => [['rheon-a2', 'panta-v1']],
  protocol: () => ['isolated', 'ssvp', 'belief-board', 'drift-policy', ['glauber', 'drift-policy']],
  backend: () => [
    { kind: 'surrogate', coupling: 0 },
    { kind: 'surrogate', coupling: 1e6, field: { correct: -5 } },
    { kind: 'surrogate', premise_bias: -2, belief: 0 },
  ],
  encoders: () => [
    [
      { name: 'h', kind: 'hashing', dim: 8 },
      { name: 'g', kind: 'hashing', dim: 16 },
    ],
    [{ name: 'x9', kind: 'hashing', dim: 64 }],
  ],
  max_tokens: () => [1, 2_147_483_647],
  fixed_length: () => [true],
  whitening: () => ['raw'],
  concurrency: () => [1, 65_536],
  lookahead: () => [16, 4_194_304],
  ssvp: () => [{ tau: 0 }, { tau: 2, encoder: 'h' }],
  population: () => [
    { file: F.people },
    { file: F.people, assign: 'same' },
    { file: F.people, assign: 'fraction', fraction: 1 },
    [{ name: 'none' }, { name: 'probe', file: F.people, assign: 'fraction', fraction: 0.5 }],
  ],
  annealing: () => [{ to: 0 }, { to: 2, shape: 'geometric' }],
  drift: () => [{ tolerance: 0 }, { tolerance: 1 }],
};

type Spec = Record<string, unknown>;
type Edit =
  | { op: 'valid'; key: string; pick: number }
  | { op: 'set'; key: string; pick: number }
  | { op: 'wild'; key: string; pick: number }
  | { op: 'delete'; key: string }
  | { op: 'repeat'; key: string };
type TextEdit =
  | { op: 'truncate'; at: number }
  | { op: 'insert'; at: number; token: string }
  | { op: 'duplicate'; line: number }
  | { op: 'bomb' };

const keys = Object.keys(CANDIDATES);
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('valid' as const), key: fc.constantFrom(...Object.keys(VALID)), pick: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('set' as const), key: fc.constantFrom(...keys), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('wild' as const), key: fc.constantFrom(...keys), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), key: fc.constantFrom(...Object.keys(BASE)) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('repeat' as const),
      key: fc.constantFrom('prompts', 'geometries', 'sizes', 'temperatures', 'encoders'),
    }),
  },
);
const TOKENS = [
  ':',
  '- ',
  '[',
  ']',
  '{',
  '}',
  '&a ',
  '*a',
  '\t',
  '\n  ',
  '"',
  "'",
  '#',
  '%',
  '---\n',
  '? ',
  '!!binary ',
  '\u0000',
  '\ufeff',
  '\u0085',
  ': :',
];
const textArb: fc.Arbitrary<TextEdit> = fc.oneof(
  fc.record({ op: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ op: fc.constant('insert' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), token: fc.constantFrom(...TOKENS) }),
  fc.record({ op: fc.constant('duplicate' as const), line: fc.nat() }),
  fc.constant({ op: 'bomb' as const }),
);

function applyEdit(spec: Spec, edit: Edit): void {
  switch (edit.op) {
    case 'valid': {
      const values = VALID[edit.key]();
      spec[edit.key] = values[edit.pick % values.length];
      return;
    }
    case 'set': {
      const values = CANDIDATES[edit.key]();
      spec[edit.key] = values[edit.pick % values.length];
      return;
    }
    case 'wild':
      spec[edit.key] = WILD[edit.pick % WILD.length];
      return;
    case 'delete':
      delete spec[edit.key];
      return;
    case 'repeat': {
      const list = spec[edit.key];
      if (Array.isArray(list) && list.length > 0) spec[edit.key] = [...list, list[0]];
    }
  }
}

function applyText(yaml: string, edit: TextEdit): string {
  const at = (f: number) => Math.floor(f * yaml.length);
  switch (edit.op) {
    case 'truncate':
      return yaml.slice(0, at(edit.at));
    case 'insert':
      return yaml.slice(0, at(edit.at)) + edit.token + yaml.slice(at(edit.at));
    case 'duplicate': {
      const lines = yaml.split('\n');
      const i = edit.line % lines.length;
      return [...lines.slice(0, i + 1), lines[i], ...lines.slice(i + 1)].join('\n');
    }
    case 'bomb':
      return `${yaml}lol: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n${['b', 'c', 'd', 'e', 'f', 'g']
        .map(
          (k, i) =>
            `${k}: &${k} [${Array(9)
              .fill(`*${i === 0 ? 'a' : ['b', 'c', 'd', 'e', 'f'][i - 1]}`)
              .join(',')}]`,
        )
        .join('\n')}\n`;
  }
}

/** Every file and folder under `dir`, files with their size and modification time: equal snapshots, nothing written. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const s = statSync(path);
      // A folder by its entries (its mtime moves with a lock file taken and released before a refusal).
      out.push(s.isDirectory() ? `${path} dir` : `${path} ${s.size} ${s.mtimeMs}`);
      if (s.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * The commands on a finished corpus and the distributed roles, each refused before it writes: a name the
 * corpus has, a bad value, a folder that is no corpus or no part, a file given twice, a malformed Redis URL.
 * Every one runs in every test run (the property's draws reach only some of them).
 */
function commandCases(): string[][] {
  return [
    ['embed', F.corpus, '--encoder', 'h:hashing:8'],
    ['embed', F.corpus, '--encoder', 'a1:hashing:8', '--encoder', 'a1:hashing:16'],
    ['embed', F.corpus, '--encoder', 'x:onnx:missing-model'],
    ['embed', F.corpus, '--encoder', 'x:hashing:0'],
    ['embed', F.empty, '--encoder', 'x:hashing:8'],
    ['embed', F.corpus],
    ['judge', F.corpus, '--judge', '{kind: llm}'],
    ['judge', F.corpus, '--judge', '{kind: llm, backend: {kind: openai, base_url: "ftp://x/v1", model: m}}'],
    ['judge', F.corpus, '--judge', F.afile],
    ['judge', F.damaged, '--judge', '{kind: reference}'],
    ['judge', F.corpus, '--judge', '{kind: reference}', '--concurrency', '0'],
    ['merge', join(F.empty, 'merged'), F.corpus],
    ['merge', join(F.empty, 'merged'), F.empty, F.empty],
    ['merge', F.afile, F.corpus],
    ['annotate', 'export', F.corpus, '--n', '0'],
    ['annotate', 'export', F.corpus, '--n', '4', '--out', F.afile],
    ['annotate', 'export', F.corpus, '--n', '4', '--judge', 'nope'],
    ['annotate', 'score', F.corpus, F.afile, F.afile],
    ['annotate', 'score', F.empty, F.afile],
    ['calibrate-tau', F.corpus],
    ['calibrate-tau', F.corpus, '--fp', '0'],
    ['calibrate-tau', F.empty],
    ['calibrate-tau', F.damaged, '--arm', 'full-broadcast'],
    ['publish', F.corpus, '--out', F.afile],
    ['publish', F.corpus, '--out', F.corpus],
    ['publish', F.afile, '--check'],
    ['publish', join(F.empty, 'missing'), '--check'],
    ['report', F.corpus, '--judge', 'nope'],
    ['plan', F.afile],
    ['plan', F.empty, '--gpus', '0'],
    ['verify', F.damaged],
    ['status', '--redis', 'redis-host:6379'],
    ['worker', '--redis', 'http://127.0.0.1:6379'],
    ['scheduler', F.afile, '--redis', 'redis://127.0.0.1:6379'],
    ['collector', '--redis', 'redis://[::1'],
    ['dashboard', '--corpus', F.empty],
  ];
}

const counts = { spec: { ok: 0, refused: 0 }, argv: { ok: 0, refused: 0 }, commands: { ok: 0, refused: 0 } };

/** Runs `panta ARGS` in-process and checks the gate's property; `watched` are folders that must not change. */
async function checkGate(args: string[], watched: string[], tally: { ok: number; refused: number }): Promise<void> {
  const before = watched.map(snapshot);
  const { code, stdout, stderr } = await pantaInProcess(args);
  const shown = `panta ${args.map((a) => JSON.stringify(a)).join(' ')}\nexit ${code}\nstderr: ${stderr}`;
  if (code === 0) {
    tally.ok++;
    expect(stdout, shown).toMatch(/^complete: /m);
    const outs = args.flatMap((a, i) => (a === '--out' ? [args[i + 1]] : []));
    const out = outs.at(-1)!;
    // The generator keeps every accepted folder inside the fixture folder, never the working directory.
    expect(out.startsWith(`${root}/`), shown).toBe(true);
    const verified = await pantaInProcess(['verify', out]);
    expect(verified.code, `${shown}\nverify: ${verified.stdout}${verified.stderr}`).toBe(0);
    return;
  }
  tally.refused++;
  expect(code, shown).toBe(2);
  expect(stderr, shown).toMatch(/^panta: [^\n]+\n$/);
  expect(watched.map(snapshot), shown).toEqual(before);
}

/** One generated case, whose files are all under `dir`: checkGate on `args`, then `dir` removed whatever happened. */
async function checkCase(dir: string, args: string[], tally: { ok: number; refused: number }): Promise<void> {
  try {
    await checkGate(args, [root], tally);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Says how the cases split; the generator must reach both sides of the gate, or the property says little. */
function expectBothSides(what: string, cases: number, tally: { ok: number; refused: number }): void {
  console.log(`fuzz seed ${SEED}: ${what}, ${tally.ok} ran to a corpus that verifies, ${tally.refused} refused`);
  expect(tally.ok).toBeGreaterThan(cases / 20);
  expect(tally.refused).toBeGreaterThan(cases / 2);
}

/**
 * A test file's share of the gate's properties: `spec` the spec mutations of part `spec.part` of `spec.of` (their
 * cases drawn from the seed plus the part), `argv` the command lines and the commands on a finished corpus.
 */
export function describeGate(share: { spec?: { part: number; of: number }; argv?: boolean }): void {
  describe(`the input gate, by property (seed ${SEED}; FUZZ_SEED=${SEED} replays)`, () => {
    beforeAll(async () => {
      // This file's tallies alone (in a worker that shares modules, another file may have counted before).
      for (const tally of Object.values(counts)) Object.assign(tally, { ok: 0, refused: 0 });
      await makeFixtures();
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    if (share.spec) specMutations(share.spec.part, share.spec.of);
    if (share.argv) {
      commandLines();
      commandsOnCorpus();
    }
  });
}

function specMutations(part: number, of: number): void {
  const cases = Math.ceil(SPEC_CASES / of);
  const seed = SEED + part - 1;
  it(`spec mutations, part ${part} of ${of} (seed ${seed}): exit 0 with a corpus that verifies, or exit 2, one line, nothing written (${cases} cases)`, async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(editArb, { minLength: 1, maxLength: 3 }),
        fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: textArb }),
        async (edits, text) => {
          const dir = mkdtempSync(join(root, `case${n++}-`));
          const spec: Spec = structuredClone(BASE);
          for (const edit of edits) applyEdit(spec, edit);
          let yaml = stringify(spec);
          if (text) yaml = applyText(yaml, text);
          const file = join(dir, 'spec.yaml');
          writeFileSync(file, yaml);
          await checkCase(dir, ['run', file, '--out', join(dir, 'out')], counts.spec);
        },
      ),
      { seed, numRuns: cases },
    );
    expectBothSides(`${cases} spec cases`, cases, counts.spec);
  }, 240_000);
}

function commandLines(): void {
  it(`command lines: options and values of every command (${ARGV_CASES} cases)`, async () => {
    let n = 0;
    const OPTION_VALUES: Record<string, string[]> = {
      '--concurrency': ['0', '-1', '1', '3', '65536', '65537', '1e9', 'x', '', '1.5'],
      '--seed': ['0', '7', '-1', '1.5', '9007199254740992', 'x'],
      '--log-level': ['debug', 'silent', 'loud', ''],
      '--metrics-port': ['-1', '70000', 'x', '1.5'],
    };
    const outs = () => ['', ' ', F.afile, F.underFile, '/proc/panta-fuzz', F.damaged, F.folder];
    // Commands other than run, each with one value that makes its command line invalid (a valid one would
    // start a server or wait for Redis).
    const OTHERS: string[][] = [
      ['verify'],
      ['report'],
      ['runn'],
      ['verify', 'a', 'b'],
      ['serve-surrogate', '--port', '-1'],
      ['serve-surrogate', '--fault-rate', '2'],
      ['serve-surrogate', '--latency-ms', '1e12'],
      ['worker', '--concurrency', '0'],
      ['worker', '--base-url', 'ftp://x'],
      ['worker', '--lock-ms', '0'],
      ['scheduler'],
      ['scheduler', 'x.yaml', '--concurrency', '65537'],
      ['collector', '--durable-ms', '1e10'],
      ['dashboard', '--port', 'x'],
      ['models', 'check'],
      ['models', 'check', 'x', '--threads', '0'],
      ['status', 'extra'],
      ['run', '--bogus'],
      ['-x'],
      ['report', 'dir', '--out', ''],
    ];
    type ArgEdit =
      | { op: 'option'; flag: string; pick: number }
      | { op: 'out'; pick: number }
      | { op: 'spec'; pick: number }
      | { op: 'extra' }
      | { op: 'dangling'; flag: string }
      | { op: 'unknown' };
    const argEdit: fc.Arbitrary<ArgEdit> = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({ op: fc.constant('option' as const), flag: fc.constantFrom(...Object.keys(OPTION_VALUES)), pick: fc.nat() }),
      },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('out' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('spec' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.constant({ op: 'extra' as const }) },
      {
        weight: 1,
        arbitrary: fc.record({ op: fc.constant('dangling' as const), flag: fc.constantFrom('--out', '--concurrency', '--seed') }),
      },
      { weight: 1, arbitrary: fc.constant({ op: 'unknown' as const }) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 4, arbitrary: fc.array(argEdit, { minLength: 0, maxLength: 3 }) },
          { weight: 1, arbitrary: fc.constantFrom(...OTHERS) },
        ),
        async (plan) => {
          const dir = mkdtempSync(join(root, `argv${n++}-`));
          const file = join(dir, 'spec.yaml');
          writeFileSync(file, stringify(BASE));
          let args: string[];
          if (typeof plan[0] === 'string') args = plan as string[];
          else {
            args = ['run', file, '--out', join(dir, 'out')];
            for (const edit of plan as ArgEdit[]) {
              if (edit.op === 'option') {
                const values = OPTION_VALUES[edit.flag];
                args.push(edit.flag, values[edit.pick % values.length]);
              } else if (edit.op === 'out') args.push('--out', outs()[edit.pick % outs().length]);
              else if (edit.op === 'spec') args[1] = [F.folder, join(dir, 'missing.yaml'), F.afile, RHEON6, F.underFile, ''][edit.pick % 6];
              // Absolute, inside the case folder: after a dangling --out it is the folder (never the working directory).
              else if (edit.op === 'extra') args.push(join(dir, 'extra'));
              else if (edit.op === 'unknown') args.push('--bogus');
              else args = [...args, edit.flag];
            }
          }
          await checkCase(dir, args, counts.argv);
        },
      ),
      { seed: SEED, numRuns: ARGV_CASES },
    );
    expectBothSides(`${ARGV_CASES} command lines`, ARGV_CASES, counts.argv);
  }, 240_000);
}

function commandsOnCorpus(): void {
  it('every command on a finished corpus, and the roles: each refusal is one line, exit 2, nothing written', async () => {
    const cases = commandCases();
    for (const args of cases) await checkGate(args, [root], counts.commands);
    console.log(`fuzz: ${cases.length} command cases on a finished corpus and the roles, ${counts.commands.refused} refused`);
    expect(counts.commands).toEqual({ ok: 0, refused: cases.length });
  }, 120_000);
}
