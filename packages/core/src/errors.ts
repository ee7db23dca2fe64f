/**
 * Bad input (spec, dataset, template, edges file, corpus) is reported as one line that names the file, the
 * field and the fix. The CLI prints `message` and exits 2; nothing is written before input is validated.
 */
export class InputError extends Error {
  override name = 'InputError';
  constructor(
    readonly file: string,
    readonly field: string,
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`${file}: ${field ? `${field}: ` : ''}${problem}; fix: ${fix}`);
  }
}

/**
 * A rejection or a catch can carry any value (a string thrown by a dependency, an object from a worker); the
 * code that handles it wants one shape with a `name` and a `message`, so anything that is not an Error is
 * wrapped, its text kept.
 */
export function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
