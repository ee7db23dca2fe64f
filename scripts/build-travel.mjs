#!/usr/bin/env node
// Builds datasets/travel8.jsonl: the travel-planning scenarios of "Hallucination as Context Drift" (section
// 4.1): 8 destinations (Barcelona, Tokyo, Paris, New York City, Rome, Amsterdam, Prague, Sydney), each with
// dates, budget, duration and season, the ground truth the roles' assertions are checked against (the
// destination airport, the month's typical weather, the full schedule) and one injected mismatch per role:
//   planner  the schedule cut off before its final two days (simulated message truncation)
//   booking  airport codes of an alternate destination
//   advisor  the weather of the wrong month
// The mismatches ride in `briefings` (keyed by the population entry ids of examples/travel-roles.jsonl); the
// checkable facts in `assertions` (gold phrases and the injected ones). Written by hand for Panta (the paper's
// scenario definitions are unreleased); climate figures are rounded typical daily highs.
//
//   node scripts/build-travel.mjs [OUT]        (default datasets/travel8.jsonl)
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRecords } from './dataset-lib.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outPath = resolve(root, process.argv[2] ?? 'datasets/travel8.jsonl');

// id, city, country, dates, month, season, days, budget, airport [code, name], alternate [code, city, airport
// name], weather in the trip's month [high C, words], weather of the wrong month [month, high C, words], sights.
const SCENARIOS = [
  [
    'barcelona',
    'Barcelona',
    'Spain',
    '12 to 16 May 2026',
    'May',
    'spring',
    5,
    '2,400 EUR',
    ['BCN', 'El Prat'],
    ['LIS', 'Lisbon', 'Humberto Delgado'],
    [22, 'mild and sunny'],
    ['January', 14, 'cool with some rain'],
    ['the Gothic Quarter', 'the Sagrada Familia', 'Park Guell', 'Montjuic', 'Barceloneta beach'],
  ],
  [
    'tokyo',
    'Tokyo',
    'Japan',
    '3 to 9 April 2026',
    'April',
    'spring',
    7,
    '3,500 USD',
    ['HND', 'Haneda'],
    ['ICN', 'Seoul', 'Incheon'],
    [19, 'mild, cherry blossom season'],
    ['August', 31, 'hot and humid'],
    ['Asakusa', 'Shibuya', 'Meiji Shrine', 'Ueno Park', 'Tsukiji outer market', 'a day trip to Nikko', 'Odaiba'],
  ],
  [
    'paris',
    'Paris',
    'France',
    '8 to 11 October 2026',
    'October',
    'autumn',
    4,
    '1,800 EUR',
    ['CDG', 'Charles de Gaulle'],
    ['BRU', 'Brussels', 'Zaventem'],
    [16, 'cool and changeable'],
    ['July', 26, 'warm and sunny'],
    ['the Louvre', 'Montmartre', 'the Musee d Orsay', 'the Marais'],
  ],
  [
    'new-york',
    'New York City',
    'United States',
    '1 to 6 December 2026',
    'December',
    'winter',
    6,
    '4,000 USD',
    ['JFK', 'John F Kennedy'],
    ['YUL', 'Montreal', 'Trudeau'],
    [7, 'cold, possible snow'],
    ['June', 27, 'warm and humid'],
    ['Central Park', 'the Metropolitan Museum', 'Brooklyn Bridge', 'the High Line', 'Broadway', 'the Statue of Liberty'],
  ],
  [
    'rome',
    'Rome',
    'Italy',
    '20 to 24 September 2026',
    'September',
    'autumn',
    5,
    '2,200 EUR',
    ['FCO', 'Fiumicino'],
    ['ATH', 'Athens', 'Eleftherios Venizelos'],
    [27, 'warm and mostly dry'],
    ['February', 13, 'cool and wet'],
    ['the Colosseum', 'the Vatican Museums', 'Trastevere', 'the Pantheon', 'the Borghese Gallery'],
  ],
  [
    'amsterdam',
    'Amsterdam',
    'Netherlands',
    '14 to 18 July 2026',
    'July',
    'summer',
    5,
    '2,000 EUR',
    ['AMS', 'Schiphol'],
    ['CPH', 'Copenhagen', 'Kastrup'],
    [22, 'mild with long days'],
    ['November', 9, 'cold, grey and windy'],
    ['the Rijksmuseum', 'the Anne Frank House', 'the Jordaan', 'a canal cruise', 'Vondelpark'],
  ],
  [
    'prague',
    'Prague',
    'Czech Republic',
    '5 to 8 March 2026',
    'March',
    'early spring',
    4,
    '1,200 EUR',
    ['PRG', 'Vaclav Havel'],
    ['VIE', 'Vienna', 'Schwechat'],
    [9, 'chilly, occasional frost'],
    ['August', 25, 'warm and sunny'],
    ['Prague Castle', 'Charles Bridge', 'the Old Town Square', 'Vysehrad'],
  ],
  [
    'sydney',
    'Sydney',
    'Australia',
    '10 to 15 January 2026',
    'January',
    'summer',
    6,
    '4,500 AUD',
    ['SYD', 'Kingsford Smith'],
    ['AKL', 'Auckland', 'Auckland Airport'],
    [26, 'hot and sunny'],
    ['July', 17, 'cool and mild'],
    ['the Opera House', 'Bondi Beach', 'the Royal Botanic Garden', 'the Blue Mountains', 'Manly by ferry', 'The Rocks'],
  ],
];

const NUMBERS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven'];

function record([id, city, country, dates, month, season, days, budget, airport, alternate, weather, wrongWeather, sights]) {
  const [code, airportName] = airport;
  const [altCode, altCity, altAirport] = alternate;
  const [high, words] = weather;
  const [wrongMonth, wrongHigh, wrongWords] = wrongWeather;
  const kept = days - 2;
  const schedule = sights
    .slice(0, kept)
    .map((s, i) => `Day ${i + 1}: ${s}`)
    .join('; ');
  return {
    id: `travel-${id}`,
    question:
      `Plan a ${days}-day trip to ${city}, ${country}, ${dates} (${season}), for one traveller with a budget of ${budget}. ` +
      'Agree with your team on destination, dates, budget and preferences, then state the destination airport code, ' +
      'the weather to expect and the day-by-day schedule.',
    accepted: [code, `${airportName} airport`],
    false_answers: [altCode, altCity],
    false_premise: false,
    source: `hand-written for Panta after Hallucination as Context Drift (section 4.1); city=${city}; month=${month}; days=${days}; budget=${budget}; weather=${words}, highs around ${high} C`,
    facts: [code, `${high} C`, `${days} days`],
    briefings: {
      planner: `Schedule received (the message was cut off after day ${kept}): ${schedule}.`,
      booking: `Flight and transfer search results: arrive ${altCode} (${altCity} ${altAirport}), return from ${altCode}; hotels near the centre of ${altCity}.`,
      advisor: `Weather data for ${wrongMonth}: ${wrongWords}, typical highs around ${wrongHigh} C.`,
    },
    assertions: [
      { name: 'airport', gold: [code, airportName], wrong: [altCode, altCity, altAirport] },
      {
        name: 'weather',
        gold: [`${high} C`, `${high} degrees`, `${high}°C`],
        wrong: [`${wrongHigh} C`, `${wrongHigh} degrees`, `${wrongHigh}°C`],
      },
      {
        name: 'schedule',
        gold: [`${days} days`, `${days} day`, `${NUMBERS[days]} days`, `day ${days}`],
        wrong: [`${kept} days`, `${kept} day`, `${NUMBERS[kept]} days`],
      },
    ],
  };
}

writeRecords(outPath, SCENARIOS.map(record));
console.log(`wrote ${SCENARIOS.length} scenarios to ${outPath}`);
