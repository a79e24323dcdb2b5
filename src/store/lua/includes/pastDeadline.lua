--[[
  Whether Redis's clock is past `ms` (wall-clock milliseconds): a write that comes after the
  replica gave up on it must not apply.
]]
local function pastDeadline(ms)
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ms)
end
