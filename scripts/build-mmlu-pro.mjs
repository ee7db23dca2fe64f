#!/usr/bin/env node
// Builds datasets/mmlu-pro28.jsonl: 28 multiple-choice reasoning questions from MMLU-Pro, two per category
// (see datasets/README.md for source, license and selection).
//
//   node scripts/build-mmlu-pro.mjs DIR [OUT] [PER_CATEGORY]
//
// DIR holds the per-category `<category>_result.json` files of the MMLU-Pro repository's
// eval_results/gpt4o/ folder (github.com/TIGER-AI-Lab/MMLU-Pro at commit ff991b5, where every test question is
// stored with its options and gold letter beside GPT-4o's reply). Only question, options, answer and
// metadata are read; GPT-4o's replies are not. OUT defaults to datasets/mmlu-pro28.jsonl, PER_CATEGORY to 2
// (datasets/mmlu-pro392.jsonl: 28, at least the 384 items of a 95% / 5% margin sample). Plain Node.
import { readFileSync, readdirSync } from 'node:fs';
import { resolve, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { containsWords, writeRecords } from './dataset-lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LETTERS = 'ABCDEFGHIJ';

function fail(message) {
  console.error(`build-mmlu-pro: ${message}`);
  process.exit(2);
}

/**
 * An item is usable when its options are pairwise distinct word-wise (no option contains another), so the
 * reference judge can tell the gold option from every distractor in a reply, and when every option is a short
 * phrase (at most 12 words) that a one-paragraph reply can quote.
 */
function usable(item) {
  const opts = item.options;
  if (opts.length < 4 || opts.some((o) => o.trim() === '' || o.split(/\s+/).length > 12)) return false;
  for (let i = 0; i < opts.length; i++) {
    for (let j = 0; j < opts.length; j++) if (i !== j && containsWords(opts[i], opts[j])) return false;
  }
  return item.question.length <= 600;
}

function main() {
  const dir = process.argv[2];
  if (!dir) fail('pass the folder of <category>_result.json files as the first argument');
  const outPath = resolve(root, process.argv[3] ?? 'datasets/mmlu-pro28.jsonl');
  const PER_CATEGORY = Number(process.argv[4] ?? 2);
  if (!Number.isInteger(PER_CATEGORY) || PER_CATEGORY < 1) fail(`PER_CATEGORY ${process.argv[4]}: give a whole number of at least 1`);
  let files;
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('_result.json'))
      .sort();
  } catch (err) {
    fail(`${dir}: cannot list (${err.code ?? err.message}); fix: pass the folder of eval_results/gpt4o`);
  }
  if (files.length === 0) fail(`${dir}: no *_result.json files`);
  const records = [];
  for (const f of files) {
    const items = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    const picked = items
      .filter((it) => Number.isInteger(it.question_id) && LETTERS[it.answer_index] === it.answer && usable(it))
      .sort((a, b) => a.question_id - b.question_id)
      .slice(0, PER_CATEGORY);
    if (picked.length < PER_CATEGORY) fail(`${f}: only ${picked.length} usable questions`);
    for (const it of picked) {
      const options = it.options.map((o) => o.trim());
      const gold = options[it.answer_index];
      const listed = options.map((o, i) => `(${LETTERS[i]}) ${o}`).join('\n');
      records.push({
        id: `mp${it.question_id}`,
        question: `${it.question.trim()}\nOptions:\n${listed}\nAnswer with the text of one option.`,
        accepted: [gold],
        false_answers: options.filter((_, i) => i !== it.answer_index),
        false_premise: false,
        source: `MMLU-Pro (Wang et al. 2024), test split via github.com/TIGER-AI-Lab/MMLU-Pro@ff991b5 eval_results, MIT (dataset card) / Apache-2.0 (repository); category=${it.category}; src=${it.src}; gold=${it.answer}`,
        choices: options,
      });
    }
  }
  writeRecords(outPath, records);
  console.log(`wrote ${records.length} prompts to ${outPath}`);
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) main();
