--[[
  Removes a part, its version and its place among the live sessions, and notes it in `change`
  when there was one.
]]
local function removePart(partsKey, versionsKey, liveKey, name, change)
  redis.call('ZREM', liveKey, name)
  redis.call('HDEL', versionsKey, name)
  if redis.call('HDEL', partsKey, name) == 1 then
    change[#change + 1] = 'd'
    change[#change + 1] = name
  end
end
