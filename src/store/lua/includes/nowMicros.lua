--[[
  Redis's clock, in microseconds, as digits: epochs and lineages are made from it, so a later one
  is a larger number.
]]
local function nowMicros()
  local t = redis.call('TIME')
  return t[1] .. string.format('%06d', tonumber(t[2]))
end
