import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RHEON6, ROOT, pantaAsync, tempDir, writeSpec } from '../../../test/helpers.js';
import { buildToRun } from '../bin/build-choice.js';

const REPO_PACKAGES = pathToFileURL(join(import.meta.dirname, '../../..', 'packages/'));

/** A workspace's packages/ folder with the given packages built at `built` (seconds) and the bundle at `bundled`. */
function workspace(built: Record<string, number>, bundled?: number): URL {
  const packages = join(tempDir('panta-build-choice-'), 'packages');
  for (const [name, at] of Object.entries(built)) {
    const info = join(packages, name, 'dist', '.tsbuildinfo');
    mkdirSync(join(packages, name, 'dist'), { recursive: true });
    writeFileSync(info, '{}');
    utimesSync(info, at, at);
  }
  if (bundled !== undefined) {
    const main = join(packages, 'cli', 'bundle', 'main.js');
    mkdirSync(join(packages, 'cli', 'bundle'), { recursive: true });
    writeFileSync(main, '');
    utimesSync(main, bundled, bundled);
  }
  return pathToFileURL(`${packages}/`);
}

describe('which build bin/panta.js runs', () => {
  it('the bundle while it is at least as new as every package build, else the packages dist/', () => {
    expect(buildToRun(workspace({ core: 1000, cli: 1000 }, 1000))).toBe('bundle');
    expect(buildToRun(workspace({ core: 1000, cli: 999 }, 1001))).toBe('bundle');
    // a `tsc -b` alone rebuilt a package after the bundle
    expect(buildToRun(workspace({ core: 1002, cli: 1000 }, 1001))).toBe('dist');
    // no bundle (a checkout built with tsc -b only), or a package never built
    expect(buildToRun(workspace({ core: 1000, cli: 1000 }))).toBe('dist');
    const unbuilt = workspace({ cli: 1000 }, 1001);
    mkdirSync(new URL('core', unbuilt));
    expect(buildToRun(unbuilt)).toBe('dist');
    rmSync(new URL('core', unbuilt), { recursive: true });
    expect(buildToRun(unbuilt)).toBe('bundle');
  });

  it('runs the bundle in this checkout: the test command builds it before the suite, so the spawned panta is what ships', () => {
    expect(buildToRun(REPO_PACKAGES), 'packages/cli/bundle is missing or older than a package build: run npm run build').toBe('bundle');
  });

  it("the bundle starts the ONNX session's worker thread, a module of its own beside the chunk that starts it", async () => {
    const dir = tempDir('panta-bundle-onnx-');
    const model = join(ROOT, 'packages/embed/test/fixtures/tiny-encoder');
    const spec = writeSpec(
      dir,
      `name: bundle-onnx\ndataset: ${RHEON6}\nprompts: [fq117]\nseed: 5\ngeometries: [ring]\nsizes: [8]\ntemperatures: [0.5]\nsweeps: 2\nconcurrency: 4\nbackend: {kind: surrogate}\nencoders: [{name: tiny, kind: onnx, path: ${model}}]\n`,
    );
    const out = join(dir, 'out');
    const run = await pantaAsync(['run', spec, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { encoders: { name: string; dim: number }[] };
    expect(manifest.encoders.map((e) => e.name)).toEqual(['tiny']);
  });
});
