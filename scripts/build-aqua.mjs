#!/usr/bin/env node
// Builds datasets/aqua-rat.jsonl: AQUA-RAT's multiple-choice algebra word problems (the Drift paper's reasoning
// task; see datasets/README.md for source, license and selection).
//
//   node scripts/build-aqua.mjs FILE [OUT]
//
// FILE is `test.json` of github.com/google-deepmind/AQuA (254 problems, one JSON object a line: question,
// options "A)...", rationale, correct). The rationale is not used. OUT defaults to datasets/aqua-rat.jsonl.
// Plain Node.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { containsWords, normalise, writeRecords } from './dataset-lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LETTERS = 'ABCDE';

function fail(message) {
  console.error(`build-aqua: ${message}`);
  process.exit(2);
}

/**
 * An item is usable when each option is a non-empty phrase after the reference judge's normalisation and no option
 * contains another word-wise, so the judge can tell the gold option from every distractor in a reply.
 */
function usable(options) {
  if (options.some((o) => normalise(o) === '')) return false;
  for (let i = 0; i < options.length; i++)
    for (let j = 0; j < options.length; j++) if (i !== j && containsWords(options[i], options[j])) return false;
  return true;
}

const file = process.argv[2];
if (!file) fail('give the path of AQuA test.json as the first argument');
const out = resolve(process.argv[3] ?? join(root, 'datasets', 'aqua-rat.jsonl'));
const records = [];
let skipped = 0;
readFileSync(file, 'utf8')
  .split('\n')
  .forEach((line, i) => {
    if (line.trim() === '') return;
    const item = JSON.parse(line);
    const options = (item.options ?? []).map((o, k) => {
      const m = /^\s*([A-E])\s*\)\s*(.*)$/s.exec(o);
      if (!m || m[1] !== LETTERS[k]) fail(`${file}:${i + 1}: option ${k + 1} is not "${LETTERS[k]})..."`);
      return m[2].trim();
    });
    const gold = LETTERS.indexOf(item.correct);
    if (typeof item.question !== 'string' || options.length < 4 || gold < 0 || gold >= options.length)
      fail(`${file}:${i + 1}: expected question, 4 or 5 options and the correct letter`);
    if (!usable(options)) {
      skipped++;
      return;
    }
    const listed = options.map((o, k) => `(${LETTERS[k]}) ${o}`).join('\n');
    records.push({
      id: `aq${i + 1}`,
      question: `${item.question.trim()}\nOptions:\n${listed}\nAnswer with the text of one option.`,
      accepted: [options[gold]],
      false_answers: options.filter((_, k) => k !== gold),
      false_premise: false,
      source: `AQUA-RAT (Ling et al. 2017), test.json via github.com/google-deepmind/AQuA@26b64ed, Apache-2.0; line=${i + 1}; gold=${item.correct}`,
      choices: options,
    });
  });
writeRecords(out, records);
console.log(`build-aqua: ${records.length} prompts (${skipped} skipped: options the reference judge cannot tell apart) -> ${out}`);
