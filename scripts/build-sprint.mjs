#!/usr/bin/env node
// Builds datasets/sprint5.jsonl: the software-project scenarios of the cross-domain replication in
// "Hallucination as Context Drift" (section 5.8, Table 4): a team of three (Project Manager, Developer, QA
// Engineer) plans a two-week sprint. Each scenario has the product, its target platform, the six stories in
// scope and the current requirement QA tests against, and one injected mismatch per role, as the paper's:
//   pm   the scope truncated: the story list cut off after its fourth story
//   dev  the wrong target platform (web vs. mobile)
//   qa   stale requirements: the superseded version of the requirement under test
// The mismatches ride in `briefings` (keyed by the population entry ids of examples/sprint-roles.jsonl); the
// checkable facts in `assertions`: `platform`, `scope`, `requirements`. Written by hand for Panta (the paper's
// scenario definitions are unreleased).
//
//   node scripts/build-sprint.mjs [OUT]        (default datasets/sprint5.jsonl)
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRecords } from './dataset-lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outPath = resolve(root, process.argv[2] ?? 'datasets/sprint5.jsonl');

const MOBILE = { words: 'an iOS and Android mobile app', gold: ['iOS and Android', 'mobile app'], code: 'mobile' };
const WEB = { words: 'a web app for desktop browsers', gold: ['web app', 'desktop browsers'], code: 'web' };

// id, product, what it does, platform, wrong platform, six stories, current requirement [version, words, phrase],
// stale requirement [version, words, phrase].
const SCENARIOS = [
  [
    'pantry',
    'Pantry',
    'shared household grocery lists',
    MOBILE,
    WEB,
    ['list sharing', 'barcode scanning', 'offline mode', 'push reminders', 'price history', 'recipe import'],
    ['3', 'sign-in with passkeys', 'passkeys'],
    ['2', 'sign-in with SMS codes', 'SMS codes'],
  ],
  [
    'ledgerly',
    'Ledgerly',
    'small-business invoicing',
    WEB,
    MOBILE,
    ['invoice editor', 'PDF export', 'tax rates', 'client directory', 'payment links', 'overdue alerts'],
    ['4', 'exports in PDF/A format', 'PDF/A'],
    ['3', 'exports in plain CSV', 'plain CSV'],
  ],
  [
    'trailhead',
    'Trailhead',
    'hiking route planning',
    MOBILE,
    WEB,
    ['route search', 'offline maps', 'elevation profile', 'trip sharing', 'weather alerts', 'photo journal'],
    ['2', 'maps cached for 30 days', '30 days'],
    ['1', 'maps cached for 7 days', '7 days'],
  ],
  [
    'clinicq',
    'ClinicQ',
    'clinic appointment booking',
    WEB,
    MOBILE,
    ['slot calendar', 'patient intake form', 'reminder emails', 'waitlist', 'staff rota', 'audit log'],
    ['5', 'bookings cancellable until 24 hours before', '24 hours'],
    ['4', 'bookings cancellable until 2 hours before', '2 hours'],
  ],
  [
    'beatbox',
    'Beatbox',
    'music practice tracking',
    MOBILE,
    WEB,
    ['practice timer', 'metronome', 'progress charts', 'teacher notes', 'streaks', 'audio recording'],
    ['3', 'recordings stored as AAC', 'AAC'],
    ['2', 'recordings stored as WAV', 'WAV'],
  ],
];

function record([id, product, what, platform, wrongPlatform, stories, current, stale]) {
  const kept = 4;
  const [version, words, phrase] = current;
  const [staleVersion, staleWords, stalePhrase] = stale;
  const list = (xs) => xs.map((s, i) => `story ${i + 1}: ${s}`).join('; ');
  return {
    id: `sprint-${id}`,
    question:
      `Plan a two-week sprint for ${product}, ${platform.words} for ${what}. Agree with your team on the target platform, ` +
      `the scope and the current requirements, then state the target platform, the stories in scope and the requirement QA tests against.`,
    accepted: platform.gold,
    false_answers: wrongPlatform.gold,
    false_premise: false,
    source: `hand-written for Panta after Hallucination as Context Drift (section 5.8); product=${product}; platform=${platform.code}; stories=${stories.length}; requirements=v${version}: ${words}`,
    facts: [platform.gold[0], `${stories.length} stories`, phrase],
    briefings: {
      pm: `Scope received from the product owner (the message was cut off after story ${kept}): ${list(stories.slice(0, kept))}.`,
      dev: `Technical brief: build ${product} as ${wrongPlatform.words}; the repository and CI are set up for the ${wrongPlatform.code} target.`,
      qa: `Test plan written against requirements v${staleVersion}: ${staleWords}.`,
    },
    assertions: [
      { name: 'platform', gold: platform.gold, wrong: wrongPlatform.gold },
      { name: 'scope', gold: ['6 stories', 'six stories', 'story 6'], wrong: [`${kept} stories`, 'four stories'] },
      { name: 'requirements', gold: [phrase, `v${version}`], wrong: [stalePhrase, `v${staleVersion}`] },
    ],
  };
}

writeRecords(outPath, SCENARIOS.map(record));
console.log(`wrote ${SCENARIOS.length} scenarios to ${outPath}`);
