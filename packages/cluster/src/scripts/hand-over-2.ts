/**
 * A continuation a worker passes on (worker.ts, passOn): the job it was added as becomes the one that took it
 * (field o<event> of its run's follow hash, which the scheduler's watchdog reads), unless the event is
 * committed already (that commit deleted the field: setting it again would leave it behind). Until this step
 * the field names the job of the worker that passed it on, which holds its lock meanwhile, so the watchdog
 * never finds the continuation's owner gone while it is on its way.
 * KEYS: the run's committed bitmap, the run's follow hash
 * ARGV: event, job id
 * Returns 1 set, 0 committed already.
 */
export const HAND_OVER = `
if redis.call('GETBIT', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[2], 'o' .. ARGV[1], ARGV[2])
return 1
`;
