#!/usr/bin/env node
// Checks JSONL prompt sets: every line a record with the documented fields, unique ids, and no accepted
// answer that contains or is contained in a known false answer (word-wise, after normalisation).
//
//   node scripts/check-datasets.mjs [FILE.jsonl ...]      (default: every datasets/*.jsonl)
//
// Exits 0 when all files are fine, 1 otherwise, printing one line per problem.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordProblems } from './dataset-lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const files =
  process.argv.length > 2
    ? process.argv.slice(2).map((f) => resolve(f))
    : readdirSync(join(root, 'datasets'))
        .filter((f) => f.endsWith('.jsonl'))
        .sort()
        .map((f) => join(root, 'datasets', f));

let bad = 0;
for (const file of files) {
  const ids = new Set();
  const lines = readFileSync(file, 'utf8').split('\n');
  let count = 0;
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    count++;
    let rec;
    try {
      rec = JSON.parse(line);
    } catch (err) {
      console.log(`${file}:${i + 1}: not JSON (${err.message})`);
      bad++;
      return;
    }
    for (const p of recordProblems(rec)) {
      console.log(`${file}:${i + 1}: ${rec.id ?? '?'}: ${p}`);
      bad++;
    }
    if (ids.has(rec.id)) {
      console.log(`${file}:${i + 1}: duplicate id ${rec.id}`);
      bad++;
    }
    ids.add(rec.id);
  });
  console.log(`${file}: ${count} records`);
}
process.exit(bad === 0 ? 0 : 1);
