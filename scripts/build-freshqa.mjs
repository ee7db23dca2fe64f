#!/usr/bin/env node
// Builds datasets/freshqa.jsonl from the shared FreshQA subset (see datasets/README.md).
//
//   node scripts/build-freshqa.mjs CSV [OUT]
//
// CSV is a FreshQA release in its upstream column layout; OUT defaults to datasets/freshqa.jsonl; both relative to
// the repository root (the folder above scripts/). Plain Node, no dependencies.
import { readFileSync, renameSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = 'scripts/build-freshqa.mjs';
if (!process.argv[2]) {
  console.error(`${SCRIPT}: CSV: missing; fix: pass the path of a FreshQA release CSV (upstream column layout) as the first argument`);
  process.exit(2);
}
const csvPath = resolve(root, process.argv[2]);
const outPath = resolve(root, process.argv[3] ?? 'datasets/freshqa.jsonl');

const REQUIRED = ['id', 'question', 'answers', 'false_premise', 'num_hops', 'fact_type', 'source_dataset_version'];

/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF or LF; a field in double quotes may hold commas,
 * newlines and doubled quotes ("" for "). Returns an array of records (arrays of strings).
 */
export function parseCsv(text) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const records = [];
  let record = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"') {
      if (field !== '') throw new Error(`a quote inside an unquoted field (record ${records.length + 1})`);
      quoted = true;
    } else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      if (c === '\r' && text[i + 1] === '\n') i++;
    } else {
      field += c;
    }
    i++;
  }
  if (quoted) throw new Error('unterminated quoted field at end of file');
  if (field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records.filter((r) => !(r.length === 1 && r[0] === ''));
}

function fail(message) {
  console.error(`${csvPath}: ${message}`);
  process.exit(2);
}

function main() {
  let text;
  try {
    text = readFileSync(csvPath, 'utf8');
  } catch (err) {
    fail(`cannot read the CSV (${err.code ?? err.message}); fix: pass its path as the first argument`);
  }
  let records;
  try {
    records = parseCsv(text);
  } catch (err) {
    fail(err.message);
  }
  const [header, ...rows] = records;
  const col = Object.fromEntries(header.map((name, i) => [name.trim(), i]));
  for (const name of REQUIRED) if (!(name in col)) fail(`missing column "${name}"; expected ${REQUIRED.join(',')}`);

  const seen = new Set();
  const lines = rows.map((row, r) => {
    const line = r + 2;
    if (row.length !== header.length) fail(`line ${line}: ${row.length} fields, expected ${header.length}`);
    const get = (name) => row[col[name]];
    const upstream = get('id').trim();
    if (!/^\d+$/.test(upstream)) fail(`line ${line}: id "${upstream}" is not an integer`);
    const id = `fq${upstream}`;
    if (seen.has(id)) fail(`line ${line}: duplicate id ${upstream}`);
    seen.add(id);
    const question = get('question').trim();
    if (!question) fail(`line ${line}: empty question`);
    const accepted = get('answers')
      .split(' | ')
      .map((a) => a.trim())
      .filter((a) => a !== '');
    if (accepted.length === 0) fail(`line ${line}: no answers`);
    const fp = get('false_premise').trim().toLowerCase();
    if (fp !== 'true' && fp !== 'false') fail(`line ${line}: false_premise "${fp}" is not true/false`);
    const source =
      `FreshQA (Vu et al. 2023), ${get('source_dataset_version').trim()}, Apache-2.0; ` +
      `fact_type=${get('fact_type').trim()}; num_hops=${get('num_hops').trim()}`;
    return JSON.stringify({ id, question, accepted, false_answers: [], false_premise: fp === 'true', source });
  });

  mkdirSync(dirname(outPath), { recursive: true });
  const tmp = `${outPath}.tmp-${process.pid}`;
  writeFileSync(tmp, `${lines.join('\n')}\n`);
  renameSync(tmp, outPath);
  console.log(`wrote ${lines.length} prompts to ${outPath}`);
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) main();
