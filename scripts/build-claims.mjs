#!/usr/bin/env node
// Builds datasets/claims24.jsonl: 24 claims in the style of FEVER (Thorne et al. 2018), 12 supported and
// 12 refuted, each to be labelled `supported` or `refuted` (FEVER's NOT ENOUGH INFO class is left out, as in
// the claim-verification runs of "Shared Epistemic State").
//
//   node scripts/build-claims.mjs [OUT]        (default datasets/claims24.jsonl)
//
// Written by hand for Panta (no copy of FEVER's files was at hand): settled encyclopaedic facts, one claim
// per fact, refuted claims made by swapping one entity, as FEVER's annotators mutated claims.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRecords } from './dataset-lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outPath = resolve(root, process.argv[2] ?? 'datasets/claims24.jsonl');

const CHOICES = ['supported', 'refuted'];

// [claim, label]
const ITEMS = [
  ['The Eiffel Tower is located in Paris.', 'supported'],
  ['Sydney is the capital of Australia.', 'refuted'],
  ['Mount Everest is the highest mountain above sea level on Earth.', 'supported'],
  ['The Pacific Ocean is the smallest ocean on Earth.', 'refuted'],
  ['Jane Austen wrote Pride and Prejudice.', 'supported'],
  ['William Shakespeare wrote Don Quixote.', 'refuted'],
  ['At standard atmospheric pressure, water boils at 100 degrees Celsius.', 'supported'],
  ['The Moon is larger than the Earth.', 'refuted'],
  ['The Amazon River flows through Brazil.', 'supported'],
  ['Albert Einstein was born in France.', 'refuted'],
  ['Barack Obama was born in Hawaii.', 'supported'],
  ['Mercury is the planet farthest from the Sun.', 'refuted'],
  ['Canberra is the capital of Australia.', 'supported'],
  ['The Nile flows into the Pacific Ocean.', 'refuted'],
  ['The Beatles were formed in Liverpool.', 'supported'],
  ['Penguins live in the wild in the Arctic.', 'refuted'],
  ['Marie Curie won Nobel Prizes in both physics and chemistry.', 'supported'],
  ['Ludwig van Beethoven composed The Magic Flute.', 'refuted'],
  ['The human heart has four chambers.', 'supported'],
  ['The chemical symbol for gold is Ag.', 'refuted'],
  ['Leonardo da Vinci painted the Mona Lisa.', 'supported'],
  ['Mount Kilimanjaro is in South America.', 'refuted'],
  ['Venus is the second planet from the Sun.', 'supported'],
  ['The Titanic sank in the Indian Ocean.', 'refuted'],
];

const records = ITEMS.map(([claim, label], i) => ({
  id: `cl${String(i + 1).padStart(2, '0')}`,
  question: `Claim: "${claim}" Is this claim supported or refuted? Answer "supported" or "refuted".`,
  accepted: [label],
  false_answers: CHOICES.filter((c) => c !== label),
  false_premise: false,
  source: `Panta claim set (FEVER-style, written by hand), same license as Panta; label=${label}`,
  choices: CHOICES,
}));

writeRecords(outPath, records);
console.log(`wrote ${records.length} prompts to ${outPath}`);
