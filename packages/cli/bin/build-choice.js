import { readdirSync, statSync } from 'node:fs';

/**
 * Which build of the CLI `bin/panta.js` runs, given the workspace's `packages/` folder (a URL ending in /):
 * 'bundle' (cli/bundle/, which `npm run build` makes after `tsc -b`) while it is at least as new as every
 * package's last build, else 'dist' (the packages' own dist/): after a `tsc -b` alone, or with no bundle,
 * what runs is still the code last built.
 */
export function buildToRun(packages) {
  try {
    const bundled = statSync(new URL('cli/bundle/main.js', packages)).mtimeMs;
    for (const p of readdirSync(packages)) if (statSync(new URL(`${p}/dist/.tsbuildinfo`, packages)).mtimeMs > bundled) return 'dist';
    return 'bundle';
  } catch {
    return 'dist';
  }
}
