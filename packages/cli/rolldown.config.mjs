// The CLI as a few ES modules (packages/cli/bundle/), built from the packages' dist/ after `tsc -b`
// (`npm run build`). Node 20 has no module compile cache: a `panta` process spent a fifth of a short command's
// CPU resolving, reading and linking the ~400 ES modules of the @panta packages, zod and yaml one by one
// (bench/NOTES.md: the CLI bundled). What is inlined: the @panta packages and the pure-ES dependencies they
// load at start; every other package (CommonJS, native, or loaded on first use) stays in node_modules,
// resolved from here as from any package of the workspace.
import { fileURLToPath } from 'node:url';

const INLINED = /^(@panta\/|zod(\/|$)|yaml(\/|$))/;
const at = (path) => fileURLToPath(new URL(path, import.meta.url));

export default {
  input: {
    main: at('./dist/main.js'),
    // The ONNX session's worker_thread: embed's session-thread.ts starts ./session-worker.js next to itself.
    'session-worker': at('../embed/dist/onnx/session-worker.js'),
  },
  platform: 'node',
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
