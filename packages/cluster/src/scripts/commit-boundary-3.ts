/**
 * Commits a sweep boundary's outcome at most once (a retried or duplicated job changes nothing) and asks the
 * collector to journal it; the collector then tells the scheduler. Refused for a closed run.
 * KEYS: boundaries hash, closed set, collector control inbox
 * ARGV: run id, sweep, outcome JSON
 * Returns 1 committed, 0 committed before, -1 run closed.
 */
export const COMMIT_BOUNDARY = `
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return -1 end
if redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3]) == 0 then return 0 end
redis.call('XADD', KEYS[3], '*', 'op', 'boundary', 'run', ARGV[1], 'sweep', ARGV[2])
return 1
`;
