import { InvalidArgumentError } from 'commander';
import { firstIssue, issueToInputError, sweepSpecSchema } from '@panta/core';

/**
 * Parsers of option values. A value the spec also has (concurrency, seed) is checked by the spec's own
 * schema, so the command line accepts exactly what a spec accepts, with the same messages.
 */

/** setTimeout holds at most 2^31 - 1 ms; a longer delay would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

function numberOf(value: string): number {
  const n = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(n)) throw new InvalidArgumentError(`"${value}" is not a number; fix: write a number`);
  return n;
}

type SpecKey = 'concurrency' | 'seed';

/** A value of the spec's key `key`, held to the spec's bounds. */
export function specValue(key: SpecKey): (value: string) => number {
  const schema = sweepSpecSchema.shape[key];
  return (value) => {
    const n = numberOf(value);
    const parsed = schema.safeParse(n);
    if (parsed.success) return parsed.data as number;
    const e = issueToInputError('', firstIssue(parsed.error.issues), n);
    throw new InvalidArgumentError(`${e.problem}; fix: ${e.fix}`);
  };
}

/** An integer from `min` to `max`. */
export function intIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = numberOf(value);
    if (!Number.isInteger(n)) throw new InvalidArgumentError(`${value} is not an integer; fix: write an integer`);
    return inRange(n, value, min, max);
  };
}

/** A number from `min` to `max`. */
export function numberIn(min: number, max: number): (value: string) => number {
  return (value) => inRange(numberOf(value), value, min, max);
}

function inRange(n: number, value: string, min: number, max: number): number {
  if (n < min) throw new InvalidArgumentError(`${value} is too small (minimum ${min}); fix: use a value of at least ${min}`);
  if (n > max) throw new InvalidArgumentError(`${value} is too big (maximum ${max}); fix: use a value of at most ${max}`);
  return n;
}

/** Milliseconds of a timer: 1 to 2^31 - 1. */
export const timerMs = intIn(1, MAX_TIMER_MS);

/** A port: 0 (any free one) to 65535. */
export const port = intIn(0, 65_535);

/**
 * A path that is not empty (an empty --out would write the corpus into the current folder) and does not
 * look like an option (`--out --seed 3` takes "--seed" as the folder otherwise).
 */
export function path(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('an empty path; fix: give a folder, e.g. runs/mine');
  if (value.startsWith('-'))
    throw new InvalidArgumentError(
      `"${value}" looks like an option, not a path; fix: give the path first (write ./${value} for a name that starts with -)`,
    );
  return value;
}

/** An http:// or https:// URL (a model endpoint). */
export function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`"${value}" is not a URL; fix: write an http:// or https:// URL, e.g. http://host:8000/v1`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError(`"${value}" is not an http:// or https:// URL; fix: write one, e.g. http://host:8000/v1`);
  return value;
}

/** One http(s) URL or several, comma-separated (a worker balancing over a node's endpoints). */
export function httpUrls(value: string): string[] {
  const urls = value.split(',').map((u) => u.trim());
  if (urls.some((u) => u === '')) throw new InvalidArgumentError(`"${value}" has an empty URL; fix: separate URLs with single commas`);
  return urls.map(httpUrl);
}

/** A comma-separated list of names, each one of `allowed`. */
export function listOf(allowed: readonly string[]): (value: string) => string {
  return (value) => {
    const bad = value
      .split(',')
      .map((s) => s.trim())
      .find((s) => !allowed.includes(s));
    if (bad !== undefined)
      throw new InvalidArgumentError(`unknown value "${bad}"; fix: use a comma-separated list of ${allowed.join(', ')}`);
    return value;
  };
}

/**
 * An option that takes one value, given once: a second value would silently replace the first (commander
 * keeps the last), so it is refused. Commander passes the value so far as `previous` (undefined at first).
 */
export function onceOnly(hint: string): (value: string, previous?: string) => string {
  return (value, previous) => {
    if (previous !== undefined)
      throw new InvalidArgumentError(`given twice ("${previous}" and "${value}"), and only one is used; fix: ${hint}`);
    return value;
  };
}
