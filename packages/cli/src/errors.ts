import { InputError, redact, toError } from '@panta/core';

/** Exit codes: 0 done, 1 failed (or a corpus that does not verify), 2 bad input (nothing written), 130 interrupted. */
export const EXIT = { ok: 0, failed: 1, badInput: 2, interrupted: 130 } as const;

/** Prints an error as one line, redacted (a server can echo a key into it), and returns the exit code it deserves. */
export function reportError(error: unknown): number {
  if (error instanceof InputError) {
    process.stderr.write(`panta: ${redact(error.message)}\n`);
    return EXIT.badInput;
  }
  const e = toError(error);
  process.stderr.write(`panta: ${redact(e.message)}\n`);
  if (process.env.PANTA_DEBUG) process.stderr.write(`${redact(e.stack ?? '')}\n`);
  return EXIT.failed;
}
