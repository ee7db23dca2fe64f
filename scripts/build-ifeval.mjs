#!/usr/bin/env node
// Builds datasets/ifeval510.jsonl: IFEval's prompts with their verifiable instructions (see datasets/README.md
// for source, license and selection).
//
//   node scripts/build-ifeval.mjs FILE [OUT]
//
// FILE is IFEval's `instruction_following_eval/data/input_data.jsonl` (541 prompts: key, prompt,
// instruction_id_list, kwargs). Every prompt is kept but the 31 whose instructions include
// language:response_language, which Panta's ifevalStrict does not check (it needs a language detector).
// OUT defaults to datasets/ifeval510.jsonl. Plain Node.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRecords } from './dataset-lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const UNCHECKED = 'language:response_language';

function fail(message) {
  console.error(`build-ifeval: ${message}`);
  process.exit(2);
}

const file = process.argv[2];
if (!file) fail('give the path of IFEval input_data.jsonl as the first argument');
const out = resolve(process.argv[3] ?? join(root, 'datasets', 'ifeval510.jsonl'));
const records = [];
readFileSync(file, 'utf8')
  .split('\n')
  .forEach((line, i) => {
    if (line.trim() === '') return;
    const item = JSON.parse(line);
    const { key, prompt, instruction_id_list: ids, kwargs } = item;
    if (
      !Number.isInteger(key) ||
      typeof prompt !== 'string' ||
      !Array.isArray(ids) ||
      !Array.isArray(kwargs) ||
      ids.length !== kwargs.length
    )
      fail(`${file}:${i + 1}: expected key, prompt, instruction_id_list and kwargs of the same length`);
    if (ids.includes(UNCHECKED)) return;
    records.push({
      id: `if${key}`,
      question: prompt,
      accepted: [],
      false_answers: [],
      false_premise: false,
      source: `IFEval (Zhou et al. 2023), input_data.jsonl, Apache-2.0; key=${key}`,
      instructions: ids.map((id, k) => {
        const args = Object.fromEntries(Object.entries(kwargs[k] ?? {}).filter(([, v]) => v !== null));
        return Object.keys(args).length > 0 ? { id, args } : { id };
      }),
    });
  });
writeRecords(out, records);
console.log(`build-ifeval: ${records.length} prompts -> ${out}`);
