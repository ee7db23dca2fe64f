/**
 * A Lua helper the -n steps share: `sliced(command, key, args, width)` calls `command key ...` over `args` in
 * slices (unpack() is bounded by Lua's C stack: at most 4,000 arguments a call, whole groups of `width`
 * arguments each) and returns the replies' entries in order (nothing for a command answering a number).
 */
export const SLICED = `
local function sliced(command, key, args, width)
  local out = {}
  local step = width * math.floor(4000 / width)
  for from = 1, #args, step do
    local reply = redis.call(command, key, unpack(args, from, math.min(from + step - 1, #args)))
    if type(reply) == 'table' then for i = 1, #reply do out[#out + 1] = reply[i] end end
  end
  return out
end
`;
