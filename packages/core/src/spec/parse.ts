import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { InputError } from '../errors.js';
import { checkTeamKeys } from '../team/spec.js';
import { dynamicsArms } from './arms.js';
import { sweepSpecSchema, type SweepSpec } from './schema.js';

/** Renders a zod path as the user wrote it: `sizes.torus2d[1]`, `backend.kind`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** A value as the user wrote it, on one line: YAML's .nan and .inf by name, long values cut short. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (typeof value === 'number' && !Number.isFinite(value)) return Number.isNaN(value) ? '.nan' : value > 0 ? '.inf' : '-.inf';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // A YAML alias inside its own anchor makes a cycle.
    text = Array.isArray(value) ? 'a list that contains itself' : 'a mapping that contains itself';
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const part of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[part];
  }
  return cur;
}

/** zod's type names as a user reads them, with their article: "an integer", "a list". */
function typeName(expected: string): string {
  switch (expected) {
    case 'int':
      return 'an integer';
    case 'array':
      return 'a list';
    case 'object':
    case 'record':
      return 'a mapping';
    default:
      return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
  }
}

/**
 * The issue to report: the first, except that of several bounds on one value the tightest wins (an
 * integer over 2^53 breaks both the safe-integer bound and the key's own maximum: the key's is the one to fix).
 */
export function firstIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue {
  const first = issues[0];
  if (first.code !== 'too_big' && first.code !== 'too_small') return first;
  const at = fieldPath(first.path);
  let best = first;
  for (const issue of issues) {
    if (issue.code !== first.code || fieldPath(issue.path) !== at) continue;
    if (issue.code === 'too_big' && best.code === 'too_big' && Number(issue.maximum) < Number(best.maximum)) best = issue;
    if (issue.code === 'too_small' && best.code === 'too_small' && Number(issue.minimum) > Number(best.minimum)) best = issue;
  }
  return best;
}

/** One zod issue as an InputError: the field, what is wrong with it, and what to write instead. */
export function issueToInputError(file: string, issue: z.core.$ZodIssue, input: unknown): InputError {
  const path = fieldPath(issue.path);
  const got = valueAt(input, issue.path);
  const shown = describeValue(got);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const key = issue.keys[0];
      const where = fieldPath([...issue.path, key]);
      return new InputError(file, where, `unknown key "${key}"`, 'remove it or correct its spelling (see schema/sweep.schema.json)');
    }
    case 'invalid_type': {
      const wanted = issue.expected === 'int' ? 'an integer' : issue.expected === 'number' ? 'a finite number' : typeName(issue.expected);
      if (got === undefined)
        return new InputError(
          file,
          path,
          'required key is missing',
          `add ${path}: <${issue.expected === 'int' ? 'integer' : issue.expected}>`,
        );
      if (typeof got === 'number' && !Number.isFinite(got))
        return new InputError(file, path, `${shown} is not a finite number`, `write ${wanted}`);
      if (typeof got === 'number' && issue.expected === 'int')
        return new InputError(file, path, `${shown} is not an integer`, 'write an integer');
      return new InputError(file, path, `expected ${typeName(issue.expected)}, got ${shown}`, `write ${wanted}`);
    }
    case 'invalid_value':
      return new InputError(file, path, `${shown} is not allowed`, `use one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`);
    case 'invalid_format':
      if (issue.format === 'url') {
        const what = issue.message === 'Invalid URL' ? 'a URL' : issue.message;
        return new InputError(file, path, `${shown} is not ${what}`, `write ${what}, e.g. http://host:8000/v1`);
      }
      return new InputError(file, path, `${shown} is not allowed: ${issue.message}`, `use ${issue.message}`);
    case 'custom': {
      const fix = (issue.params as { fix?: unknown } | undefined)?.fix;
      return new InputError(file, path, issue.message, typeof fix === 'string' ? fix : 'correct the value (see schema/sweep.schema.json)');
    }
    case 'invalid_union':
      return unionError(file, issue, input, got, path);
    case 'too_small': {
      const min = String(issue.minimum);
      if (issue.origin === 'array')
        return new InputError(file, path, `needs at least ${min} ${min === '1' ? 'entry' : 'entries'}`, `list at least ${min}`);
      if (issue.origin === 'string')
        return new InputError(file, path, min === '1' ? 'must not be empty' : `is shorter than ${min} characters`, 'write a longer value');
      if (issue.inclusive === false)
        return new InputError(file, path, `${shown} is too small (it must be above ${min})`, `use a value above ${min}`);
      return new InputError(file, path, `${shown} is too small (minimum ${min})`, `use a value of at least ${min}`);
    }
    case 'too_big': {
      const max = String(issue.maximum);
      if (issue.origin === 'array') return new InputError(file, path, `has more than ${max} entries`, `list at most ${max}`);
      if (issue.origin === 'string') return new InputError(file, path, `is longer than ${max} characters`, 'write a shorter value');
      if (issue.inclusive === false)
        return new InputError(file, path, `${shown} is too big (it must be below ${max})`, `use a value below ${max}`);
      return new InputError(file, path, `${shown} is too big (maximum ${max})`, `use a value of at most ${max}`);
    }
    default:
      return new InputError(file, path, `${shown}: ${issue.message}`, 'correct the value (see schema/sweep.schema.json)');
  }
}

/** A value that fits none of a union's forms: the form the user evidently meant names the problem. */
function unionError(file: string, issue: z.core.$ZodIssueInvalidUnion, input: unknown, got: unknown, path: string): InputError {
  // A shorthand string that is none of the allowed names: list every name any branch accepts.
  if (typeof got === 'string') {
    const names = issue.errors.flat().flatMap((i) => (i.code === 'invalid_value' && i.path.length <= 1 ? i.values.map(String) : []));
    if (names.length > 0) return new InputError(file, path, `unknown value "${got}"`, `use one of ${[...new Set(names)].join(', ')}`);
  }
  // Forms of another type say nothing about this value (a string given where a string or a list is
  // allowed fails the list form for being a string): keep the forms whose type it has, if any.
  const nonEmpty = issue.errors.filter((b) => b.length > 0);
  const typed = nonEmpty.filter((b) => !(b.length === 1 && b[0].code === 'invalid_type' && b[0].path.length === 0));
  const branches = typed.length > 0 ? typed : nonEmpty;
  if (branches.length > 0) {
    // A discriminated union whose `kind` is unknown, or a shorthand that matches no branch: report the
    // innermost issue of the branch that got furthest, which names the offending key.
    const best = branches.reduce((a, b) => (deepest(b) > deepest(a) ? b : a));
    const inner = best.reduce((a, b) => (b.path.length > a.path.length ? b : a));
    if (inner.path.length > 0 || branches.length === 1) {
      return issueToInputError(file, { ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue, input);
    }
  }
  return new InputError(file, path, `${describeValue(got)} is not a valid value`, 'see schema/sweep.schema.json for the accepted forms');
}

function deepest(issues: readonly z.core.$ZodIssue[]): number {
  return Math.max(...issues.map((i) => i.path.length));
}

/** A key given twice in one mapping, named with the line of its first use (YAML keeps neither silently). */
function duplicateKey(text: string, file: string, line: number, col: number): InputError {
  const lines = text.split(/\r?\n/);
  const key = /^["']?([^"':]+?)["']?\s*:/.exec(lines[line - 1]?.slice(col - 1) ?? '')?.[1];
  if (!key) return new InputError(file, `line ${line}, column ${col}`, 'a key is given twice in one mapping', 'keep one of them');
  const indent = ' '.repeat(col - 1);
  const first = lines
    .slice(0, line - 1)
    .findIndex((l) => l.startsWith(`${indent}${key}`) && /^\s*:/.test(l.slice(indent.length + key.length)));
  const also = first >= 0 ? ` (first on line ${first + 1})` : '';
  return new InputError(
    file,
    `line ${line}, column ${col}: ${key}`,
    `the key is given twice${also}`,
    'keep one of them (a list holds several values: [a, b])',
  );
}

/** Parses and validates a sweep spec's YAML text. Throws InputError on the first problem found. */
export function parseSweepSpec(text: string, file: string): SweepSpec {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const err = doc.errors[0];
    const pos = err.linePos?.[0];
    const where = pos ? `line ${pos.line}, column ${pos.col}` : '';
    if (err.code === 'DUPLICATE_KEY' && pos) throw duplicateKey(text, file, pos.line, pos.col);
    throw new InputError(
      file,
      where,
      `malformed YAML (${err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')})`,
      'fix the YAML syntax at that position',
    );
  }
  let input: unknown;
  try {
    input = doc.toJS();
  } catch (e) {
    // The yaml package refuses aliases that expand past 100 copies (a "billion laughs" bomb).
    const message = (e as Error).message;
    if (/alias/i.test(message))
      throw new InputError(file, '', `its aliases (*name) expand too far (${message})`, 'write the values out, or use fewer aliases');
    throw new InputError(file, '', `cannot be read as YAML (${message})`, 'fix the YAML');
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InputError(file, '', 'a sweep spec must be a YAML mapping of keys', 'start from examples/quickstart.yaml');
  }
  const parsed = sweepSpecSchema.safeParse(input);
  if (!parsed.success) throw issueToInputError(file, firstIssue(parsed.error.issues), input);
  checkTeamKeys(input, dynamicsArms(parsed.data), file);
  return parsed.data;
}
