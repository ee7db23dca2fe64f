import type { Redis } from 'ioredis';
import { COMMIT_BOUNDARY, FAIL_BOUNDARY } from './commit-boundary.js';
import { COMMIT_EVENT } from './commit-event.js';
import { FAIL_EVENT } from './fail-event.js';
import { LEASE } from './lease.js';
import { READ_VERSIONS } from './read-versions.js';

/** The Lua steps, one script per atomic step (ioredis sends EVALSHA and falls back to EVAL after a Redis restart). */
export interface PantaScripts {
  commitEvent(...args: (string | number)[]): Promise<number>;
  commitBoundary(...args: (string | number)[]): Promise<number>;
  failBoundary(...args: (string | number)[]): Promise<number>;
  failEvent(...args: (string | number)[]): Promise<number>;
  readVersions(...args: (string | number)[]): Promise<(number | string | null)[]>;
  lease(...args: (string | number)[]): Promise<number>;
}

export function withScripts(redis: Redis): Redis & PantaScripts {
  redis.defineCommand('commitEvent', { numberOfKeys: 6, lua: COMMIT_EVENT });
  redis.defineCommand('commitBoundary', { numberOfKeys: 3, lua: COMMIT_BOUNDARY });
  redis.defineCommand('failBoundary', { numberOfKeys: 3, lua: FAIL_BOUNDARY });
  redis.defineCommand('failEvent', { numberOfKeys: 3, lua: FAIL_EVENT });
  redis.defineCommand('readVersions', { numberOfKeys: 3, lua: READ_VERSIONS });
  redis.defineCommand('lease', { numberOfKeys: 1, lua: LEASE });
  return redis as Redis & PantaScripts;
}
