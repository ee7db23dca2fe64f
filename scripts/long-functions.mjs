#!/usr/bin/env node
// Functions longer than a limit in the packages' sources, read with the TypeScript parser (no build, no type
// check): every function declaration, method, constructor, accessor, function expression and arrow function in
// packages/*/src, its length counted from its first token (after its doc comment) to its closing line.
// Usage: node scripts/long-functions.mjs [--max N]   (default 80). Prints `file:line name lines`, longest first;
// exits 1 when it finds any.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Default limit: a function over this many lines is to be split into named steps. */
export const MAX_LINES = 80;

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** A readable name for a function node: `f`, `Class.method`, `Class.constructor`, or where an arrow is assigned. */
function nameOf(node) {
  const text = (n) => (n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n)) ? n.text : undefined);
  const owner = (n) => {
    for (let p = n.parent; p; p = p.parent) {
      if ((ts.isClassDeclaration(p) || ts.isClassExpression(p)) && p.name) return `${p.name.text}.`;
      if (ts.isClassDeclaration(p) || ts.isClassExpression(p)) return '<class>.';
    }
    return '';
  };
  if (ts.isConstructorDeclaration(node)) return `${owner(node)}constructor`;
  if (ts.isFunctionDeclaration(node)) return text(node.name) ?? '<default>';
  if (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
    const inClass = ts.isClassLike(node.parent);
    return `${inClass ? owner(node) : ''}${text(node.name) ?? '<computed>'}`;
  }
  if (ts.isFunctionExpression(node) && node.name) return node.name.text;
  // an arrow or function expression: name it after what it is assigned to or passed to
  const p = node.parent;
  if (ts.isVariableDeclaration(p)) return text(p.name) ?? '<destructured>';
  if (ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))
    return `${ts.isPropertyDeclaration(p) ? owner(p) : ''}${text(p.name) ?? '<computed>'}`;
  if (ts.isCallExpression(p)) {
    const callee = p.expression;
    const called = ts.isPropertyAccessExpression(callee) ? callee.name.text : (text(callee) ?? 'call');
    return `<arrow in ${called}()>`;
  }
  return '<arrow>';
}

/** Every function-like node of one source text with its 1-based start line and its length in lines. */
export function functionLengths(text, fileName = 'source.ts') {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      out.push({ name: nameOf(node), line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Functions over `max` lines in packages/*\/src, as `{ file, line, name, lines }` with file relative to the root. */
export function longFunctions(max = MAX_LINES, base = root) {
  const out = [];
  for (const pkg of readdirSync(join(base, 'packages'))) {
    const src = join(base, 'packages', pkg, 'src');
    let files;
    try {
      files = sources(src);
    } catch {
      continue;
    }
    for (const file of files) {
      for (const f of functionLengths(readFileSync(file, 'utf8'), file)) {
        if (f.lines > max) out.push({ file: relative(base, file), ...f });
      }
    }
  }
  return out.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { max: { type: 'string', default: String(MAX_LINES) } } });
  const max = Number(values.max);
  if (!Number.isInteger(max) || max < 1) {
    console.error(`long-functions: --max ${values.max} is not a positive integer: pass e.g. --max 80`);
    process.exit(2);
  }
  const found = longFunctions(max);
  for (const f of found) console.log(`${f.file}:${f.line} ${f.name} ${f.lines}`);
  process.exit(found.length > 0 ? 1 : 0);
}
