import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { RHEON6, pantaProcess, tempDir, writeSpec, pantaInProcess as cli } from '../../../test/helpers.js';

const SPEC = `name: array
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring, torus2d]
sizes: [16]
temperatures: [0.4, 1.1]
sweeps: 2
seed: 21
`;

/** Exit 2, one line on stderr (no progress lines before it), and the folder it names was not written. */
function refused(r: { code: number; stderr: string }, out: string): string {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/; fix: /);
  expect(existsSync(out)).toBe(false);
  return lines[0];
}

let dir: string;
let spec: string;
const part = (i: number) => join(dir, 'parts', `p${i}`);

beforeAll(async () => {
  dir = tempDir();
  spec = writeSpec(dir, SPEC);
  for (const i of [1, 2]) {
    const r = await cli(['run', spec, '--shard', `${i}/2`, '--out', part(i), '--log-level', 'silent']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`part ${i} of 2: 2 runs`));
    expect(r.stdout).toMatch(new RegExp(`part ${i} of 2 done: no order parameters yet.*panta merge`));
  }
});

/** A copy of a part to edit. */
function copyOf(i: number, name: string, edit?: (m: Record<string, any>) => void): string {
  const target = join(dir, name);
  cpSync(part(i), target, { recursive: true });
  if (edit) {
    const file = join(target, 'manifest.json');
    const m = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
    edit(m);
    writeFileSync(file, JSON.stringify(m));
  }
  return target;
}

describe('panta run --shard', () => {
  for (const bad of ['0/3', '4/3', '1/0', 'a/3', '1.5/3', '2', '1/2/3', '-1/2']) {
    it(`refuses --shard ${bad} in one line, exit 2, nothing written`, async () => {
      const out = join(dir, `bad-${bad.replace(/\W/g, '_')}`);
      const line = refused(await cli(['run', spec, '--shard', bad, '--out', out]), out);
      expect(line).toMatch(/^panta: run: --shard: .*fix: write I\/N with whole numbers 1 <= I <= N/);
    });
  }

  it('refuses to resume a part into the folder of another part, or of the whole sweep', async () => {
    const other = refused(await cli(['run', spec, '--shard', '2/2', '--out', part(1)]), join(part(1), 'nothing'));
    expect(other).toMatch(/holds part 1 of 2 of this sweep, not part 2 of 2; fix: resume it with --shard 1\/2/);
    const whole = refused(await cli(['run', spec, '--out', part(1)]), join(part(1), 'nothing'));
    expect(whole).toMatch(/holds part 1 of 2 of this sweep, not the whole sweep/);
  });

  it('resumes a complete part as a no-op', async () => {
    const r = await cli(['run', spec, '--shard', '1/2', '--out', part(1), '--log-level', 'silent']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/complete: 2\/2 runs/);
  });

  it('verifies a part as a part', async () => {
    const r = await cli(['verify', part(2)]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/ok: .*part 2 of 2: 2 runs, .*no order parameters until panta merge/);
  });

  it("refuses to report a part on its own (it would be whitened on its own runs' answers)", async () => {
    const report = join(dir, 'part-report');
    const line = refused(await cli(['report', part(2), '--out', report]), report);
    expect(line).toMatch(/manifest\.json: shard: .* is part 2 of 2 of a job array, measured only once merged; fix: run panta merge OUT/);
  });
});

describe('panta merge', () => {
  it('merges the parts into a corpus that verifies; a second merge into it is refused', async () => {
    const out = join(dir, 'merged');
    const r = await cli(['merge', out, part(2), part(1)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/complete: 4\/4 runs, 192 events merged and measured/);
    const v = await cli(['verify', out]);
    expect(v.code, v.stdout).toBe(0);
    const m = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Record<string, any>;
    expect(m.shard).toBeUndefined();
    expect(m.status).toBe('complete');
    const again = await cli(['merge', out, part(1), part(2)]);
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toMatch(/merged: already exists and is not empty; fix: give a new \(or empty\) folder/);
  });

  it("removes what an interrupted merge left next to OUT (its process gone), says so, and keeps a running merge's folder", async () => {
    const out = join(dir, 'merged-after-crash');
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    const dead = join(dir, `.merged-after-crash.merging-${gone}`);
    mkdirSync(join(dead, 'events'), { recursive: true });
    writeFileSync(join(dead, 'events', 'half.parquet'), 'half');
    const running = join(dir, '.merged-after-crash.merging-1');
    mkdirSync(running);
    const r = await cli(['merge', out, part(1), part(2)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`panta: removed the unfinished folder of an interrupted merge: ${dead}\n`);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(running)).toBe(true);
    expect(readdirSync(dir).filter((n) => n.includes('.merged-after-crash.merging-'))).toEqual(['.merged-after-crash.merging-1']);
    rmSync(running, { recursive: true }); // the other cases check that no merging folder is left in this folder
  });

  it('Ctrl-C during a merge says so, exits 130 and leaves neither OUT nor its unfinished folder (the binary)', async () => {
    const out = join(dir, 'merged-interrupted');
    const p = pantaProcess(['merge', out, part(1), part(2)]);
    for (let i = 0; i < 400 && !p.stderr().includes('panta: merging'); i++) await new Promise((r) => setTimeout(r, 25));
    p.kill('SIGINT');
    const done = await p.exited;
    expect(done.code, done.stderr).toBe(130);
    expect(done.stderr).toMatch(
      /panta: interrupted: merge stopped; removed its unfinished \.merged-interrupted\.merging-\d+, .* is not written and the parts are unchanged: run the same command to merge again/,
    );
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((n) => n.includes('merged-interrupted'))).toEqual([]);
  });

  const cases: { name: string; parts: () => string[]; message: RegExp }[] = [
    {
      name: 'a missing part',
      parts: () => [part(1)],
      message: /panta merge: PART: part 2 of 2 missing \(given: 1\); fix: run each missing part \(panta run .*spec\.yaml --shard I\/2/,
    },
    {
      name: 'the same folder twice',
      parts: () => [part(1), `${part(1)}/`, part(2)],
      message: /p1\/: is given twice \(also as .*p1\); fix: give each part once/,
    },
    {
      name: 'two folders of the same index',
      parts: () => [part(1), copyOf(1, 'p1-copy'), part(2)],
      message: /shard\.index: .*p1-copy and .*p1 are both part 1 of 2/,
    },
    {
      name: 'a part of another sweep',
      parts: () => [part(1), copyOf(2, 'other-sweep', (m) => (m.fingerprint = 'f'.repeat(64)))],
      message: /other-sweep\/manifest\.json: fingerprint: .*other-sweep is a part of another sweep than .*p1 \(fingerprint ffffffffffff vs/,
    },
    {
      name: 'a part of another code version',
      parts: () => [part(1), copyOf(2, 'old-code', (m) => (m.code.panta = '0.0.1'))],
      message: /old-code\/manifest\.json: code\.panta: .*old-code was written by Panta 0\.0\.1, .*p1 by Panta/,
    },
    {
      name: 'parts of two array sizes',
      parts: () => [part(1), copyOf(2, 'of-three', (m) => (m.shard.count = 3))],
      message: /shard\.count: .*of-three is part 2 of 3, .*p1 part 1 of 2/,
    },
    {
      name: 'parts dealt under two shard policies',
      parts: () => [part(1), copyOf(2, 'old-deal', (m) => delete m.shard.policy)],
      message: /old-deal\/manifest\.json: shard\.policy: .*old-deal had its runs dealt by events, .*p1 by gpu-time; fix: /,
    },
    {
      name: 'an unfinished part',
      parts: () => [part(1), copyOf(2, 'running', (m) => (m.status = 'running'))],
      message:
        /running\/manifest\.json: status: part 2 of 2 is not complete \(status running, 2 of 2 runs\); fix: resume it: panta run .* --shard 2\/2 --out/,
    },
    {
      name: 'a whole corpus',
      parts: () => [part(1), copyOf(2, 'whole', (m) => delete m.shard)],
      message: /whole\/manifest\.json: shard: .*whole is a whole corpus, not a part of a job array/,
    },
    {
      name: 'a folder that is no corpus',
      parts: () => {
        mkdirSync(join(dir, 'empty'), { recursive: true });
        return [part(1), join(dir, 'empty')];
      },
      message: /empty: holds no manifest\.json/,
    },
    {
      name: "a part missing a run's shard",
      parts: () => {
        const p = copyOf(2, 'no-shard');
        rmSync(join(p, 'events', readdirSync(join(p, 'events')).find((f) => f.endsWith('.parquet'))!));
        return [part(1), p];
      },
      message: /no-shard: events: part 2 of 2 has no shard of its run /,
    },
  ];
  for (const c of cases) {
    it(`refuses ${c.name} in one line, exit 2, nothing in OUT`, async () => {
      const out = join(dir, 'out', c.name.replace(/\W/g, '_'));
      const line = refused(await cli(['merge', out, ...c.parts()]), out);
      expect(line).toMatch(c.message);
      expect(readdirSync(join(dir)).filter((f) => f.includes('merging'))).toEqual([]);
    });
  }

  it('refuses a shard damaged since its part finished, naming it, and leaves nothing in OUT', async () => {
    const p = copyOf(2, 'damaged');
    const shard = join(p, 'events', readdirSync(join(p, 'events')).find((f) => f.endsWith('.parquet'))!);
    // Another valid shard in its place: readable, but not the one the part's manifest hashed.
    cpSync(join(part(1), 'events', readdirSync(join(part(1), 'events')).find((f) => f.endsWith('.parquet'))!), shard);
    const out = join(dir, 'out', 'damaged');
    const r = await cli(['merge', out, part(1), p]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(
      /damaged\/events\/.*\.parquet: does not match its checksum in .*damaged\/manifest\.json.*; fix: run panta verify/,
    );
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(join(dir, 'out')).filter((f) => f.includes('merging'))).toEqual([]);
  });
});
