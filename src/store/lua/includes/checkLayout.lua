--[[
  Refuses a store written in another layout, and writes the layout and a new epoch into a store
  that has none (new, or emptied by a Redis restart without persistence). Sets `epoch`.
  Needs: KEYS[1] layout, KEYS[2] epoch, ARGV[1] the layout version this replica writes.
  Needs nowMicros (included before it).
]]
local found = redis.call('GET', KEYS[1])
if found and found ~= ARGV[1] then
  return redis.error_reply('MSBLAYOUT ' .. found)
end
if not found then redis.call('SET', KEYS[1], ARGV[1]) end
local epoch = redis.call('GET', KEYS[2])
if not epoch then
  epoch = nowMicros()
  redis.call('SET', KEYS[2], epoch)
end
