/**
 * What a worker reads for a job's events, in one step: per event whether to run it (not committed, run open),
 * and per run the texts of the versions its live events read (false where missing). A job's events were
 * dispatched only once every version they read existed, so reading them together at the job's start is exact.
 * KEYS: closed set, then per run: committed bitmap, versions hash
 * ARGV: run count, then per run: run id, event count, events..., version count, versions...
 * Returns, per run in order: a code per event (1 run it, 0 committed before, -1 run closed), then its version
 * texts (all false when none of its events runs).
 */
export const READ_EVENTS = `
local runs = tonumber(ARGV[1])
local a = 2
local out = {}
for r = 0, runs - 1 do
  local committed, versions = KEYS[2 + 2 * r], KEYS[3 + 2 * r]
  local closed = redis.call('SISMEMBER', KEYS[1], ARGV[a]) == 1
  local n = tonumber(ARGV[a + 1])
  a = a + 2
  local live = 0
  for i = 1, n do
    local code = 1
    if closed then code = -1 elseif redis.call('GETBIT', committed, ARGV[a]) == 1 then code = 0 end
    if code == 1 then live = live + 1 end
    out[#out + 1] = code
    a = a + 1
  end
  local m = tonumber(ARGV[a])
  a = a + 1
  local from = a
  while from < a + m do
    -- unpack() is bounded by Lua's C stack: fields go in slices
    local to = math.min(from + 3999, a + m - 1)
    if live > 0 then
      local texts = redis.call('HMGET', versions, unpack(ARGV, from, to))
      for i = 1, #texts do out[#out + 1] = texts[i] end
    else
      for i = from, to do out[#out + 1] = false end
    end
    from = to + 1
  end
  a = a + m
end
return out
`;
