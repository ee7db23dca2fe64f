#!/usr/bin/env node
// Builds datasets/rheon6.jsonl: six FreshQA prompts in the spirit of the Rheon experiments (three false
// premises, three valid multi-hop questions), with short key-phrase answers for the reference judge.
//
//   node scripts/build-rheon6.mjs CSV [OUT]
//
// Question text, premise flag and metadata come verbatim from the CSV (a FreshQA release in its upstream
// column layout, relative to the repository root); the accepted and known-false answers
// are curated here: short phrases that a surrogate agent can put into a one-sentence reply and the reference
// judge can find again as whole words. Upstream FreshQA gives only the full-sentence answer, kept in comments.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsv } from './build-freshqa.mjs';
import { recordProblems } from './dataset-lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = 'scripts/build-rheon6.mjs';
if (!process.argv[2]) {
  console.error(`${SCRIPT}: CSV: missing; fix: pass the path of a FreshQA release CSV (upstream column layout) as the first argument`);
  process.exit(2);
}
const csvPath = resolve(root, process.argv[2]);
const outPath = resolve(root, process.argv[3] ?? 'datasets/rheon6.jsonl');

const CURATED = [
  {
    // False premise, multi-hop. Upstream: "According to the Fermat's Last Theorem, it is impossible for a cube
    // number to be a sum of two positive cube numbers." 1729 = 1^3 + 12^3 = 9^3 + 10^3 is the taxicab number
    // the question imitates (not a cube); 4104 is the next one.
    id: 117,
    accepted: ['no such number', 'does not exist', 'no cube', "fermat's last theorem", 'impossible'],
    false_answers: ['1729', '4104'],
  },
  {
    // Valid, multi-hop (born 21 April 1926, died 8 September 2022). Upstream: "96 years old | 96".
    id: 367,
    accepted: ['96', '96 years old'],
    false_answers: ['95', '97'],
  },
  {
    // False premise, one-hop. Upstream: "Antibiotics are only effective against bacteria while the flu is a virus."
    id: 75,
    accepted: ['not effective', 'do not work', 'no antibiotics', 'flu is a virus', 'caused by a virus', 'antiviral', 'antivirals'],
    false_answers: ['amoxicillin', 'penicillin', 'azithromycin', 'doxycycline'],
  },
  {
    // Valid, multi-hop: the largest state by area is Alaska. Upstream: "Juneau". Plausible slips: the largest
    // city of Alaska, the capitals of the next largest (Texas) and most populous (California) states.
    id: 346,
    accepted: ['Juneau'],
    false_answers: ['Anchorage', 'Austin', 'Sacramento'],
  },
  {
    // False premise, one-hop. Upstream: "Venus has no moons." Zoozve is a quasi-satellite, Neith a
    // 17th-century phantom moon: the two names a model is likely to produce.
    id: 518,
    accepted: ['no moons', 'no moon', 'no natural satellites', 'does not have any moons'],
    false_answers: ['Zoozve', 'Neith'],
  },
  {
    // Valid, multi-hop: Ringo Starr (7 July 1940) before John Lennon (9 October 1940). Upstream lists
    // "Ringo Starr | R. Starr | Starr | Sir Ringo Starr | Ringo | Sir Richard Starke | Richard Starkey".
    id: 574,
    accepted: ['Ringo Starr', 'Ringo', 'Starr', 'Richard Starkey'],
    false_answers: ['John Lennon', 'Lennon', 'Paul McCartney', 'McCartney', 'George Harrison', 'Harrison'],
  },
];

function fail(message) {
  console.error(message);
  process.exit(2);
}

const [header, ...rows] = parseCsv(readFileSync(csvPath, 'utf8'));
const col = Object.fromEntries(header.map((name, i) => [name, i]));
const byId = new Map(rows.map((r) => [Number(r[col.id]), r]));

const records = CURATED.map(({ id, accepted, false_answers }) => {
  const row = byId.get(id);
  if (!row) fail(`${csvPath}: no row with id ${id}`);
  const get = (name) => row[col[name]];
  const rec = {
    id: `fq${id}`,
    question: get('question'),
    accepted,
    false_answers,
    false_premise: get('false_premise') === 'true',
    source:
      `FreshQA (Vu et al. 2023), ${get('source_dataset_version')}, Apache-2.0; fact_type=${get('fact_type')}; ` +
      `num_hops=${get('num_hops')}; answers rewritten as short key phrases for Panta`,
  };
  const problems = recordProblems(rec);
  if (problems.length) fail(`fq${id}: ${problems.join('; ')}`);
  return rec;
});

const premises = records.filter((r) => r.false_premise).length;
if (premises !== 3) fail(`expected three false-premise prompts, got ${premises}`);

mkdirSync(dirname(outPath), { recursive: true });
const tmp = `${outPath}.tmp-${process.pid}`;
writeFileSync(tmp, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
renameSync(tmp, outPath);
console.log(`wrote ${records.length} prompts to ${outPath}`);
