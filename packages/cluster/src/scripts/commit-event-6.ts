/**
 * Commits an event's result at most once: a retried, stalled or duplicated job finds the committed bit
 * (or the run closed) and changes nothing. In one step it stores the version text workers will read, the
 * result the collector will write, and tells the scheduler and the collector.
 * KEYS: committed bitmap, versions hash, results hash, closed set, scheduler inbox, collector inbox
 * ARGV: run id, event, response text, result payload, calls, tokens, inbox max length
 * Returns 1 committed, 0 committed before, -1 run closed.
 */
export const COMMIT_EVENT = `
if redis.call('SISMEMBER', KEYS[4], ARGV[1]) == 1 then return -1 end
if redis.call('GETBIT', KEYS[1], ARGV[2]) == 1 then return 0 end
redis.call('SETBIT', KEYS[1], ARGV[2], 1)
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[7], '*', 'op', 'done', 'run', ARGV[1], 'event', ARGV[2], 'calls', ARGV[5], 'tokens', ARGV[6])
redis.call('XADD', KEYS[6], '*', 'op', 'done', 'run', ARGV[1], 'event', ARGV[2])
return 1
`;
