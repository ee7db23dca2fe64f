import { sweepSpecJsonSchema } from '@panta/core';
import { EXIT } from '../errors.js';

export function schemaCommand(): number {
  process.stdout.write(`${JSON.stringify(sweepSpecJsonSchema(), null, 2)}\n`);
  return EXIT.ok;
}
