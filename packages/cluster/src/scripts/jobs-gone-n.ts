/**
 * Which of the jobs the scheduler's watchdog asks about are gone: no job hash any more (lost with a Redis
 * that lost its data, or removed after its last attempt failed), or kept in the failed set. One step for all
 * the jobs of a tick, where BullMQ's getJob + isFailed cost two round trips a job.
 * KEYS: the queue's failed set, then one job hash per job; ARGV: the job ids, in the same order.
 * Returns the 1-based positions (in ARGV) of the jobs gone.
 */
export const JOBS_GONE = `
local gone = {}
for i = 1, #ARGV do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 or redis.call('ZSCORE', KEYS[1], ARGV[i]) then gone[#gone + 1] = i end
end
return gone
`;
