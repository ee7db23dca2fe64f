#!/usr/bin/env node
// Import circles inside each package, read from the source text (no build): every relative `import` or
// `export ... from` that is not type-only is an edge; a strongly connected set of two or more files is a circle.
// Usage: node scripts/import-circles.mjs [--types] [package ...]   (default: every package; --types counts
// type-only imports too). Prints one line per circle; exits 1 when it finds any.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Relative imports that bring a value (a type-only import or re-export is no edge at run time). */
export function valueImports(text, withTypes = false) {
  const out = [];
  const re = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+['"](\.[^'"]+)['"]/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[2] && !withTypes) continue;
    // `import { type A, type B } from` brings nothing at run time either.
    const names = m[3].trim().match(/^\{([^}]*)\}$/);
    if (names) {
      const parts = names[1]
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (!withTypes && parts.length > 0 && parts.every((p) => p.startsWith('type '))) continue;
    }
    out.push(m[4]);
  }
  const bare = /(?:^|\n)\s*import\s+['"](\.[^'"]+)['"]/g;
  for (let m = bare.exec(text); m; m = bare.exec(text)) out.push(m[1]);
  return out;
}

export function circles(srcDir, withTypes = false) {
  const files = sources(srcDir);
  const edges = new Map(
    files.map((f) => [
      f,
      valueImports(readFileSync(f, 'utf8'), withTypes)
        .map((spec) => resolve(dirname(f), spec).replace(/\.js$/, '.ts'))
        .map((p) => (files.includes(p) ? p : files.includes(join(p, 'index.ts')) ? join(p, 'index.ts') : p))
        .filter((p) => files.includes(p)),
    ]),
  );
  // Tarjan's strongly connected components.
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v)) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.map((f) => relative(srcDir, f)).sort());
    }
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const withTypes = process.argv.includes('--types');
  const wanted = process.argv.slice(2).filter((a) => a !== '--types');
  const packages = wanted.length > 0 ? wanted : readdirSync(join(root, 'packages'));
  let any = false;
  for (const pkg of packages) {
    for (const scc of circles(join(root, 'packages', pkg, 'src'), withTypes)) {
      any = true;
      console.log(`${pkg}: ${scc.length} files: ${scc.join(' ')}`);
    }
  }
  process.exit(any ? 1 : 0);
}
