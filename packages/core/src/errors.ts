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
