import { SLICED } from './sliced.js';

/**
 * What a worker reads for a job's events, in one step: per event whether to run it (not committed, run open),
 * and per run the texts of the versions its live events read (false where missing). A job's events were
 * dispatched only once every version they read existed, so reading them together at the job's start is exact.
 * A run's committed bits come in one BITFIELD and its texts in one HMGET, however many events it has.
 * KEYS: closed set, then per run: committed bitmap, versions hash
 * ARGV: run count, then per run: run id, event count, events..., version count, versions...
 * Returns, per run in order: a code per event (1 run it, 0 committed before, -1 run closed), then its version
 * texts (all false when none of its events runs).
 */
export const READ_EVENTS = `${SLICED}local runs = tonumber(ARGV[1])
local a = 2
local out = {}
for r = 0, runs - 1 do
  local committed, versions = KEYS[2 + 2 * r], KEYS[3 + 2 * r]
  local closed = redis.call('SISMEMBER', KEYS[1], ARGV[a]) == 1
  local n = tonumber(ARGV[a + 1])
  a = a + 2
  local live = 0
  if closed then
    for i = 1, n do out[#out + 1] = -1 end
  else
    local bits = {}
    for i = 0, n - 1 do
      bits[3 * i + 1], bits[3 * i + 2], bits[3 * i + 3] = 'GET', 'u1', ARGV[a + i]
    end
    local before = sliced('BITFIELD', committed, bits, 3)
    for i = 1, n do
      if before[i] == 1 then out[#out + 1] = 0 else out[#out + 1] = 1; live = live + 1 end
    end
  end
  a = a + n
  local m = tonumber(ARGV[a])
  a = a + 1
  local from = a
  while from < a + m do
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
