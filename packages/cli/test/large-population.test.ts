import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RHEON6, pantaProcess, tempDir, writeSpec, pantaInProcess as cli } from '../../../test/helpers.js';

const spec = (sizes: string, extra: string) => `name: large
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: ${sizes}
temperatures: [0.7]
sweeps: 10
seed: 1
concurrency: 256
${extra}`;

describe('a population too large for this process', () => {
  it('over the memory budget: one line naming the largest ring that fits, exit 2, nothing written', async () => {
    const dir = tempDir();
    const file = writeSpec(dir, spec('[1000, 1000000]', 'memory_budget: 1 GiB\n'));
    const out = join(dir, 'out');
    const r = await cli(['run', file, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      new RegExp(
        `^panta: ${file.replaceAll('.', '\\.')}: sizes\\[1\\]: N = 1,000,000 on ring needs about [\\d.]+ GiB of memory \\(.*\\), more than 90% of memory_budget 1 GiB; fix: use a size of at most [\\d,]+ on ring, or less concurrency; or set memory_budget if this process may use more\\n$`,
      ),
    );
    expect(existsSync(out)).toBe(false);
  });

  it("over Node's heap limit: one line saying how to raise it, exit 2, nothing written", async () => {
    const dir = tempDir();
    const file = writeSpec(dir, spec('[3000000]', 'memory_budget: 1 TiB\n'));
    const out = join(dir, 'out');
    // The binary: the heap limit is its own process's.
    const r = await pantaProcess(['run', file, '--out', out], { NODE_OPTIONS: '--max-old-space-size=1024' }).exited;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^panta: .*: sizes\[0\]: N = 3,000,000 on ring needs about [\d.]+ GiB of Node's heap \(512 bytes per agent of each open run\), more than 90% of its limit of [\d.]+ GiB; fix: use a size of at most [\d,]+ on ring, or less concurrency; or raise the limit \(NODE_OPTIONS=--max-old-space-size=\d+\)\n$/,
    );
    expect(existsSync(out)).toBe(false);
  });
});
