// A bench's command line, through node:util's parseArgs: every bench spells its flags, defaults and help in one
// table, `--help` prints them, and an unknown flag or a bad value is one line and exit code 2.
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * Parses process.argv for the bench at `file` (its import.meta.filename). `flags` maps a flag's name (without
 * `--`) to {help, default?, shownDefault?, value?}: a flag with `value` takes one (`value(text)` returns it parsed, or throws
 * an Error saying what was expected), one without is a switch (false unless given). `positional`, when set,
 * is the help's name for the bench's one optional positional argument. Returns {values, positionals}.
 */
export function benchArgs(file, usage, flags, { positional } = {}) {
  const name = `bench/${basename(file)}`;
  const options = { help: { type: 'boolean', short: 'h' } };
  for (const [flag, spec] of Object.entries(flags)) options[flag] = { type: spec.value ? 'string' : 'boolean' };
  let parsed;
  try {
    parsed = parseArgs({ args: process.argv.slice(2), options, allowPositionals: positional !== undefined, strict: true });
  } catch (e) {
    bad(name, `${e.message.split('\n')[0].replace(/\. To specify a positional.*$/, '')} (--help lists the flags)`);
  }
  if (parsed.values.help) {
    console.log(`usage: node ${name} ${usage}\n`);
    for (const [flag, spec] of Object.entries(flags)) {
      const left = `  --${flag}${spec.value ? ` <${spec.meta ?? 'value'}>` : ''}`;
      const shown = spec.shownDefault ?? spec.default;
      const dflt = shown === undefined ? '' : ` (default ${shown})`;
      console.log(`${left.padEnd(28)} ${spec.help}${dflt}`);
    }
    console.log(`${'  --help'.padEnd(28)} print this help`);
    process.exit(0);
  }
  if (parsed.positionals.length > (positional === undefined ? 0 : 1))
    bad(name, `one ${positional} at most, got ${parsed.positionals.map((p) => JSON.stringify(p)).join(' ')}`);
  const values = {};
  for (const [flag, spec] of Object.entries(flags)) {
    const raw = parsed.values[flag];
    if (!spec.value) values[flag] = raw === true;
    else if (raw === undefined) values[flag] = spec.default;
    else {
      try {
        values[flag] = spec.value(raw);
      } catch (e) {
        bad(name, `--${flag}: ${e.message}, got ${JSON.stringify(raw)}`);
      }
    }
  }
  return { values, positionals: parsed.positionals };
}

function bad(name, line) {
  console.error(`${name}: ${line}`);
  process.exit(2);
}

/** A value parser: an integer at least `min`. */
export const int =
  (min = 1) =>
  (text) => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isSafeInteger(n) || n < min) throw new Error(`expected an integer >= ${min}`);
    return n;
  };

/** A value parser: a number above `above` (or at least it, with `orEqual`). */
export const num =
  (above = 0, orEqual = false) =>
  (text) => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n) || n < above || (!orEqual && n === above))
      throw new Error(`expected a number ${orEqual ? '>=' : '>'} ${above}`);
    return n;
  };

/** A value parser: a comma-separated list, each item through `item`. */
export const list = (item) => (text) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(item);

/** A value parser: one of `choices`. */
export const oneOf = (choices) => (text) => {
  if (!choices.includes(text)) throw new Error(`expected one of ${choices.join(', ')}`);
  return text;
};
