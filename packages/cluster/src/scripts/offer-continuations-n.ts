/**
 * Leaves continuations for the workers (EventTask.after): each is stored as field c<parent> of its run's
 * follow hash ("<child>:<job>"), for the worker whose commit of the parent takes it (commit-events-n), unless
 * its run is closed or its parent is committed already: then the scheduler sends it as a job. Checked and
 * stored in one step, a continuation is never left behind a parent that nobody will commit again.
 * KEYS: closed set, then per offer: its run's committed bitmap, its run's follow hash
 * ARGV: per offer: run id, parent event, child event, job
 * Returns per offer: 1 stored, 0 not (send it as a job).
 */
export const OFFER_CONTINUATIONS = `local out = {}
for i = 1, #KEYS - 1, 2 do
  local a = 2 * (i - 1) + 1
  local run, parent = ARGV[a], ARGV[a + 1]
  if redis.call('SISMEMBER', KEYS[1], run) == 1 or redis.call('GETBIT', KEYS[i + 1], parent) == 1 then
    out[#out + 1] = 0
  else
    redis.call('HSET', KEYS[i + 2], 'c' .. parent, ARGV[a + 2] .. ':' .. ARGV[a + 3])
    out[#out + 1] = 1
  end
end
return out
`;
