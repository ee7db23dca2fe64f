import { createRequire } from 'node:module';
import type * as BullMQ from 'bullmq';
import type * as IORedis from 'ioredis';

/**
 * bullmq and ioredis are CommonJS packages. An ESM `import` of one makes Node run its CJS lexer over every
 * module the package re-exports, to find their named exports (bullmq's index re-exports its 170 modules);
 * require() loads the same instances without that: bullmq 450-550 -> 240-290 ms of CPU in a fresh process,
 * ioredis 310-340 -> 180-200 (bench/NOTES.md: CommonJS packages required). Each is loaded on first use, so a
 * collector never loads bullmq.
 */
const require = createRequire(import.meta.url);

let bull: typeof BullMQ | undefined;
let io: typeof IORedis | undefined;

export function bullmq(): typeof BullMQ {
  bull ??= require('bullmq') as typeof BullMQ;
  return bull;
}

export function ioredis(): typeof IORedis {
  io ??= require('ioredis') as typeof IORedis;
  return io;
}
