import { SLICED } from './sliced.js';

/**
 * Commits the events a worker finished in one turn, each at most once: a retried, stalled or duplicated job
 * finds the committed bit (or the run closed) and changes nothing for that event. For each event committed it
 * stores the version text later events read and the result the collector writes; then one message tells the
 * scheduler what was committed (and what was found committed before, which a restarted scheduler may still
 * wait for), and one tells each collector shard concerned which results to write: a worker's turn is one step
 * whatever the number of shards.
 * Each run's events take three commands however many they are: one BITFIELD sets every committed bit and
 * answers each bit's value before, in order (an event twice in a batch is committed once), and one HSET each
 * stores the versions and the results. A command per event and bit was about a third of this step's time
 * in Redis (bench/NOTES.md: commands per run, not per event).
 * An event committed here takes its continuation, if the scheduler left one (offer-continuations-n: field
 * c<event> of the run's follow hash, "<child>:<job>"), for the job it runs under (`owner`; '' takes none): the
 * field goes, o<child> records the owner (the scheduler's watchdog reads it), and the worker runs the child
 * next. Taken in the step that commits its parent, a continuation is either taken once or, once the parent is
 * committed, never offered (the offer step checks the committed bit).
 * KEYS: closed set, scheduler inbox, then the collector inboxes named, then per run: committed bitmap,
 *       versions hash, results hash, follow hash
 * ARGV: inbox max length, collector inbox count, run count, then per run: run id, its inbox's number (from 1),
 *       event count, then per event: event, version text, result payload, calls, tokens, owner
 * The continuation's reads come with it, read after this step's writes (its parent's version among them), so
 * that the worker calls the model without another step.
 * Returns a code per event, in order: 1 committed, 0 committed before, -1 run closed; then per event 0, or its
 * continuation: {job, 1 if the child is committed already else 0, then the texts of the job's readVersions
 * in order (nil where missing)}.
 */
export const COMMIT_EVENTS = `${SLICED}local inboxes = tonumber(ARGV[2])
local runs = tonumber(ARGV[3])
local a = 4
local codes = {}
local follows = {}
local told = {}
local results = {}
for i = 1, inboxes do results[i] = {} end
for r = 0, runs - 1 do
  local k = 2 + inboxes + 4 * r
  local committed, versions, stored, follow = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4]
  local run = ARGV[a]
  local inbox = results[tonumber(ARGV[a + 1])]
  local n = tonumber(ARGV[a + 2])
  a = a + 3
  if redis.call('SISMEMBER', KEYS[1], run) == 1 then
    for i = 1, n do codes[#codes + 1] = -1; follows[#follows + 1] = 0 end
  else
    local bits = {}
    for i = 0, n - 1 do
      local b = 4 * i
      bits[b + 1], bits[b + 2], bits[b + 3], bits[b + 4] = 'SET', 'u1', ARGV[a + 6 * i], 1
    end
    local before = sliced('BITFIELD', committed, bits, 4)
    local texts, payloads, owned, claims = {}, {}, {}, {}
    for i = 1, n do
      local at = a + 6 * (i - 1)
      local event = ARGV[at]
      local child = 0
      if before[i] == 1 then
        codes[#codes + 1] = 0
        told[#told + 1] = {run, tonumber(event), 0, 0}
      else
        texts[#texts + 1] = event
        texts[#texts + 1] = ARGV[at + 1]
        payloads[#payloads + 1] = event
        payloads[#payloads + 1] = ARGV[at + 2]
        codes[#codes + 1] = 1
        told[#told + 1] = {run, tonumber(event), tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4])}
        inbox[#inbox + 1] = {run, tonumber(event)}
        owned[#owned + 1] = 'o' .. event
        local owner = ARGV[at + 5]
        local offered = owner ~= '' and redis.call('HGET', follow, 'c' .. event)
        if offered then
          redis.call('HDEL', follow, 'c' .. event)
          local sep = string.find(offered, ':', 1, true)
          redis.call('HSET', follow, 'o' .. string.sub(offered, 1, sep - 1), owner)
          claims[#claims + 1] = {#follows + 1, string.sub(offered, sep + 1)}
        end
      end
      follows[#follows + 1] = child
    end
    if #texts > 0 then
      sliced('HSET', versions, texts, 2)
      sliced('HSET', stored, payloads, 2)
      sliced('HDEL', follow, owned, 1)
    end
    for c = 1, #claims do
      local job = claims[c][2]
      local decoded = cjson.decode(job)
      local entry = {job, redis.call('GETBIT', committed, decoded.event)}
      local reads = decoded.readVersions or {}
      for from = 1, #reads, 4000 do
        local got = redis.call('HMGET', versions, unpack(reads, from, math.min(from + 3999, #reads)))
        for i = 1, #got do entry[#entry + 1] = got[i] end
      end
      follows[claims[c][1]] = entry
    end
  end
  a = a + 6 * n
end
if #told > 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'op', 'done', 'items', cjson.encode(told))
end
for i = 1, inboxes do
  if #results[i] > 0 then
    redis.call('XADD', KEYS[2 + i], '*', 'op', 'done', 'items', cjson.encode(results[i]))
  end
end
for i = 1, #follows do codes[#codes + 1] = follows[i] end
return codes
`;
