#!/usr/bin/env node
// Builds datasets/multifact26.jsonl: 26 questions in the style of FanOutQA (Zhu et al. 2024), each needing
// several independent facts; gold = the list of facts (`facts`), scored by fact recall (share of facts
// present) and exact match (every fact present), as FanOutQA's loose and strict accuracy do.
//
//   node scripts/build-multifact.mjs [OUT]        (default datasets/multifact26.jsonl)
//
// Written by hand for Panta (FanOutQA's public questions are time-sensitive and its test answers are hidden):
// only settled facts, each a short key phrase a reply will contain verbatim (surname, city, unit).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRecords } from './dataset-lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outPath = resolve(root, process.argv[2] ?? 'datasets/multifact26.jsonl');

// [question, facts]
const ITEMS = [
  [
    'What are the capital cities of the five permanent members of the UN Security Council?',
    ['Beijing', 'Paris', 'Moscow', 'London', 'Washington'],
  ],
  ['Which chemical elements have the symbols Fe, Au, Ag and Pb?', ['iron', 'gold', 'silver', 'lead']],
  [
    "Who wrote Pride and Prejudice, Moby-Dick, War and Peace and Don Quixote? Give each author's surname.",
    ['Austen', 'Melville', 'Tolstoy', 'Cervantes'],
  ],
  ['In which countries are the Eiffel Tower, the Colosseum, the Parthenon and Machu Picchu?', ['France', 'Italy', 'Greece', 'Peru']],
  ['What are the four largest planets of the Solar System?', ['Jupiter', 'Saturn', 'Uranus', 'Neptune']],
  ['Which planets of the Solar System have no natural moons?', ['Mercury', 'Venus']],
  ['Who composed the operas The Magic Flute, La traviata, Carmen and Tosca?', ['Mozart', 'Verdi', 'Bizet', 'Puccini']],
  ['What are the currencies of Japan, India, South Korea and Switzerland?', ['yen', 'rupee', 'won', 'franc']],
  ['Who painted the Mona Lisa, The Starry Night, Guernica and The Birth of Venus?', ['Leonardo', 'Van Gogh', 'Picasso', 'Botticelli']],
  ['What are the chemical symbols of sodium, mercury, tin and antimony?', ['Na', 'Hg', 'Sn', 'Sb']],
  [
    'Which countries share a land border with Germany?',
    ['Denmark', 'Poland', 'Czech', 'Austria', 'Switzerland', 'France', 'Luxembourg', 'Belgium', 'Netherlands'],
  ],
  ['Who were the first four presidents of the United States? Give their surnames.', ['Washington', 'Adams', 'Jefferson', 'Madison']],
  ['What are the three additive primary colours of light?', ['red', 'green', 'blue']],
  ['In which years did the First and the Second World War begin and end?', ['1914', '1918', '1939', '1945']],
  [
    "Who wrote Nineteen Eighty-Four, Brave New World, Fahrenheit 451 and The Handmaid's Tale? Give surnames.",
    ['Orwell', 'Huxley', 'Bradbury', 'Atwood'],
  ],
  ['What are the capitals of Australia, Canada, New Zealand and Turkey?', ['Canberra', 'Ottawa', 'Wellington', 'Ankara']],
  ['Which noble gases lie in the first three periods of the periodic table?', ['helium', 'neon', 'argon']],
  ['Who were the four members of the Beatles? Give their surnames.', ['Lennon', 'McCartney', 'Harrison', 'Starr']],
  ['What are the longest rivers of Africa, South America and Europe?', ['Nile', 'Amazon', 'Volga']],
  [
    'Who formulated the laws of motion, general relativity, evolution by natural selection and the periodic table?',
    ['Newton', 'Einstein', 'Darwin', 'Mendeleev'],
  ],
  ['What are the four national languages of Switzerland?', ['German', 'French', 'Italian', 'Romansh']],
  ['What are the highest mountains of Africa, North America, South America and Asia?', ['Kilimanjaro', 'Denali', 'Aconcagua', 'Everest']],
  ['Which cities hosted the Summer Olympic Games of 2000, 2004, 2008 and 2012?', ['Sydney', 'Athens', 'Beijing', 'London']],
  ['Who directed Jaws, Psycho, 2001: A Space Odyssey and The Godfather? Give surnames.', ['Spielberg', 'Hitchcock', 'Kubrick', 'Coppola']],
  ['What are the SI base units of mass, time, electric current and thermodynamic temperature?', ['kilogram', 'second', 'ampere', 'kelvin']],
  ['On which continents are Egypt, Chile, Mongolia and Norway?', ['Africa', 'South America', 'Asia', 'Europe']],
];

const records = ITEMS.map(([question, facts], i) => ({
  id: `mf${String(i + 1).padStart(2, '0')}`,
  question,
  // The reference judge tags a reply correct when any accepted phrase occurs; team metrics score `facts`.
  accepted: facts,
  false_answers: [],
  false_premise: false,
  source: `Panta multi-fact set (FanOutQA-style, written by hand), same license as Panta; n_facts=${facts.length}`,
  facts,
}));

writeRecords(outPath, records);
console.log(`wrote ${records.length} prompts to ${outPath}`);
