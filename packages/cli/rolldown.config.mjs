// The CLI as a few ES modules (packages/cli/bundle/), built from the packages' dist/ after `tsc -b`
// (`npm run build`). Node 20 has no module compile cache: a `panta` process spent a fifth of a short command's
// CPU resolving, reading and linking the ~400 ES modules of the @panta packages, zod and yaml one by one
// (bench/NOTES.md: the CLI bundled). What is inlined: the @panta packages and the pure-ES dependencies they
// load at start, and bullmq and ioredis with the CommonJS packages of theirs that are many files (semver,
// cron-parser): Node resolved and read their ~200 files one by one at each worker's and scheduler's start
// (a worker's CPU to its first line, median of 12 side by side: 790 -> 670 ms; a collector's unchanged). Each is
// still evaluated on first use (the bundler's lazy wrapper of a CommonJS module). Every other package (native,
// or loaded on first use) stays in node_modules, resolved from here as from any package of the workspace.
import { fileURLToPath } from 'node:url';

const INLINED = /^(@panta\/|zod(\/|$)|yaml(\/|$)|bullmq(\/|$)|ioredis(\/|$)|semver(\/|$)|cron-parser(\/|$))/;

/**
 * cluster's cjs-deps.js requires bullmq and ioredis on first use through a require of its own (createRequire):
 * in the bundle through the bundler's, which inlines them and evaluates each on its first call.
 */
const bundlerRequire = {
  name: 'panta-bundler-require',
  transform(code, id) {
    if (!id.endsWith('/cluster/dist/cjs-deps.js')) return null;
    const own = /^const require = createRequire\(import\.meta\.url\);$/m;
    // Without that line the bundle still works, on a require of node_modules (slower to start): said, not failed.
    if (!own.test(code)) this.warn('cjs-deps.js has no createRequire line any more: bullmq and ioredis not inlined');
    return code.replace(own, '');
  },
};
const at = (path) => fileURLToPath(new URL(path, import.meta.url));

export default {
  input: {
    main: at('./dist/main.js'),
    // The ONNX session's worker_thread: embed's session-thread.ts starts ./session-worker.js next to itself.
    'session-worker': at('../embed/dist/onnx/session-worker.js'),
  },
  platform: 'node',
  plugins: [bundlerRequire],
  external: (id) => !(id.startsWith('.') || id.startsWith('/') || INLINED.test(id)),
  output: {
    dir: at('./bundle'),
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunk-[hash].js',
    cleanDir: true,
    // Classes and functions keep their names (error names, logs), as in the packages' own modules.
    keepNames: true,
  },
};
