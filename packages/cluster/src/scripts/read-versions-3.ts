/**
 * What a worker reads for an event: nothing if the event is already committed (a duplicate job) or its run
 * closed, else the texts of the versions it reads, in order (false where missing).
 * KEYS: committed bitmap, versions hash, closed set
 * ARGV: run id, event, version...
 * Returns {1, text...} to run, {0} committed before, {-1} run closed.
 */
export const READ_VERSIONS = `
if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then return {-1} end
if redis.call('GETBIT', KEYS[1], ARGV[2]) == 1 then return {0} end
if #ARGV == 2 then return {1} end
local texts = redis.call('HMGET', KEYS[2], unpack(ARGV, 3))
table.insert(texts, 1, 1)
return texts
`;
