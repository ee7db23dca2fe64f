// Shared helpers for the dataset scripts: the reference judge's normalisation and the JSONL record checks.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Lowercase, punctuation to spaces, whitespace collapsed: the reference judge's normal form. */
export function normalise(text) {
  return text
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** True when the words of `inner` occur as a contiguous run of whole words in `outer` (both normalised). */
export function containsWords(outer, inner) {
  const o = normalise(outer);
  const i = normalise(inner);
  if (!i) return false;
  return ` ${o} `.includes(` ${i} `);
}

/**
 * Checks one parsed JSONL record against the dataset format. Returns a list of problems (empty when fine).
 * An accepted answer must never contain, or be contained in, a known false answer (word-wise), or the
 * reference judge could not tell them apart.
 */
export function recordProblems(rec) {
  const problems = [];
  const isStrings = (v) => Array.isArray(v) && v.every((s) => typeof s === 'string' && s.trim() !== '');
  if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) return ['not a JSON object'];
  const keys = [
    'id',
    'question',
    'accepted',
    'false_answers',
    'false_premise',
    'source',
    'facts',
    'choices',
    'briefings',
    'assertions',
    'instructions',
  ];
  for (const k of Object.keys(rec)) if (!keys.includes(k)) problems.push(`unknown field "${k}"`);
  if (typeof rec.id !== 'string' || !/^[A-Za-z0-9_-]+$/.test(rec.id)) problems.push('id must be letters, digits, _ or -');
  if (typeof rec.question !== 'string' || rec.question.trim() === '') problems.push('question must be a non-empty string');
  const ifeval = 'instructions' in rec;
  if (!isStrings(rec.accepted) || (rec.accepted.length === 0 && !ifeval))
    problems.push('accepted must be a non-empty array of strings (empty only beside IFEval instructions)');
  if (
    ifeval &&
    (!Array.isArray(rec.instructions) ||
      rec.instructions.length === 0 ||
      !rec.instructions.every(
        (i) => typeof i?.id === 'string' && (i.args === undefined || (typeof i.args === 'object' && i.args !== null)),
      ))
  )
    problems.push('instructions must be a non-empty array of {id, args} (IFEval instruction ids)');
  if (!isStrings(rec.false_answers)) problems.push('false_answers must be an array of strings');
  if (typeof rec.false_premise !== 'boolean') problems.push('false_premise must be true or false');
  if (typeof rec.source !== 'string' || rec.source.trim() === '') problems.push('source must be a non-empty string');
  if ('facts' in rec && (!isStrings(rec.facts) || rec.facts.length === 0)) problems.push('facts must be a non-empty array of strings');
  if (
    'briefings' in rec &&
    (typeof rec.briefings !== 'object' ||
      rec.briefings === null ||
      !Object.values(rec.briefings).every((b) => typeof b === 'string' && b.trim() !== ''))
  )
    problems.push('briefings must map entry ids to non-empty strings');
  if (
    'assertions' in rec &&
    (!Array.isArray(rec.assertions) ||
      rec.assertions.length === 0 ||
      !rec.assertions.every(
        (a) => typeof a?.name === 'string' && isStrings(a.gold) && a.gold.length > 0 && isStrings(a.wrong) && a.wrong.length > 0,
      ))
  )
    problems.push('assertions must be a non-empty array of {name, gold, wrong} with non-empty phrase lists');
  if ('choices' in rec) {
    if (!isStrings(rec.choices) || rec.choices.length < 2) problems.push('choices must be an array of at least two strings');
    else if (isStrings(rec.accepted) && !rec.accepted.every((a) => rec.choices.includes(a))) {
      problems.push('every accepted answer must be one of the choices');
    }
  }
  if (isStrings(rec.accepted) && isStrings(rec.false_answers)) {
    for (const a of rec.accepted) {
      for (const f of rec.false_answers) {
        if (containsWords(a, f) || containsWords(f, a)) problems.push(`accepted "${a}" and false answer "${f}" overlap word-wise`);
      }
    }
  }
  return problems;
}

/** Writes JSONL records atomically (a temporary file renamed over the target), checking each record first. */
export function writeRecords(outPath, records) {
  const seen = new Set();
  for (const rec of records) {
    const problems = recordProblems(rec);
    if (seen.has(rec.id)) problems.push('duplicate id');
    seen.add(rec.id);
    if (problems.length > 0) throw new Error(`${rec.id}: ${problems.join('; ')}`);
  }
  mkdirSync(dirname(outPath), { recursive: true });
  const tmp = `${outPath}.tmp-${process.pid}`;
  writeFileSync(tmp, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
  renameSync(tmp, outPath);
}
