import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { InputError } from '../errors.js';
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

function describe(value: unknown): string {
  return value === undefined ? 'missing' : JSON.stringify(value);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const part of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[part];
  }
  return cur;
}

/** One zod issue as an InputError: the field, what is wrong with it, and what to write instead. */
export function issueToInputError(file: string, issue: z.core.$ZodIssue, input: unknown): InputError {
  const path = fieldPath(issue.path);
  const got = valueAt(input, issue.path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const key = issue.keys[0]!;
      const where = fieldPath([...issue.path, key]);
      return new InputError(file, where, `unknown key "${key}"`, 'remove it or correct its spelling (see schema/sweep.schema.json)');
    }
    case 'invalid_type':
      if (got === undefined) return new InputError(file, path, 'required key is missing', `add ${path}: <${issue.expected}>`);
      return new InputError(file, path, `expected ${issue.expected}, got ${describe(got)}`, `write a ${issue.expected}`);
    case 'invalid_value':
      return new InputError(
        file,
        path,
        `${describe(got)} is not allowed`,
        `use one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`,
      );
    case 'invalid_union': {
      // A shorthand string that is none of the allowed names: list every name any branch accepts.
      if (typeof got === 'string') {
        const names = issue.errors.flat().flatMap((i) => (i.code === 'invalid_value' && i.path.length <= 1 ? i.values.map(String) : []));
        if (names.length > 0) return new InputError(file, path, `unknown value "${got}"`, `use one of ${[...new Set(names)].join(', ')}`);
      }
      // A discriminated union whose `kind` is unknown, or a shorthand that matches no branch: report the
      // innermost issue of the branch that got furthest, which names the offending key.
      const branches = issue.errors.filter((b) => b.length > 0);
      if (branches.length > 0) {
        const best = branches.reduce((a, b) => (deepest(b) > deepest(a) ? b : a));
        const inner = best.reduce((a, b) => (b.path.length > a.path.length ? b : a));
        if (inner.path.length > 0 || branches.length === 1) {
          return issueToInputError(file, { ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue, input);
        }
      }
      return new InputError(file, path, `${describe(got)} is not a valid value`, 'see schema/sweep.schema.json for the accepted forms');
    }
    case 'too_small':
      return new InputError(file, path, `${describe(got)} is too small (minimum ${String(issue.minimum)})`, `use a value of at least ${String(issue.minimum)}`);
    case 'too_big':
      return new InputError(file, path, `${describe(got)} is too big (maximum ${String(issue.maximum)})`, `use a value of at most ${String(issue.maximum)}`);
    default:
      return new InputError(file, path, issue.message, 'correct the value (see schema/sweep.schema.json)');
  }
}

function deepest(issues: readonly z.core.$ZodIssue[]): number {
  return Math.max(...issues.map((i) => i.path.length));
}

/** Parses and validates a sweep spec's YAML text. Throws InputError on the first problem found. */
export function parseSweepSpec(text: string, file: string): SweepSpec {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const pos = err.linePos?.[0];
    const where = pos ? `line ${pos.line}, column ${pos.col}` : '';
    throw new InputError(file, where, `malformed YAML (${err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')})`, 'fix the YAML syntax at that position');
  }
  const input: unknown = doc.toJS();
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InputError(file, '', 'a sweep spec must be a YAML mapping of keys', 'start from examples/quickstart.yaml');
  }
  const parsed = sweepSpecSchema.safeParse(input);
  if (!parsed.success) throw issueToInputError(file, parsed.error.issues[0]!, input);
  return parsed.data;
}
