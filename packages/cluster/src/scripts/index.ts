import type { Redis } from 'ioredis';
import { COMMIT_EVENT } from './commit-event.js';
import { FAIL_EVENT } from './fail-event.js';
import { READ_VERSIONS } from './read-versions.js';

/** The Lua steps, one script per atomic step (ioredis sends EVALSHA and falls back to EVAL after a Redis restart). */
export interface PantaScripts {
  commitEvent(...args: (string | number)[]): Promise<number>;
  failEvent(...args: (string | number)[]): Promise<number>;
  readVersions(...args: (string | number)[]): Promise<(number | string | null)[]>;
}

export function withScripts(redis: Redis): Redis & PantaScripts {
  redis.defineCommand('commitEvent', { numberOfKeys: 6, lua: COMMIT_EVENT });
  redis.defineCommand('failEvent', { numberOfKeys: 3, lua: FAIL_EVENT });
  redis.defineCommand('readVersions', { numberOfKeys: 3, lua: READ_VERSIONS });
  return redis as Redis & PantaScripts;
}
