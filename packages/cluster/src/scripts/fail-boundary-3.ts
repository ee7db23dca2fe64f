/**
 * Reports a boundary the worker could not complete (an LLM call failed after its retries), unless another
 * attempt committed it meanwhile.
 * KEYS: boundaries hash, closed set, scheduler inbox
 * ARGV: run id, sweep, error message, inbox max length
 * Returns 1 reported, 0 committed meanwhile, -1 run closed.
 */
export const FAIL_BOUNDARY = `
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return -1 end
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then return 0 end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'op', 'failed', 'run', ARGV[1], 'sweep', ARGV[2], 'error', ARGV[3])
return 1
`;
