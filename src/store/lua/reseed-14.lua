--[[
  Writes a whole state into a store that lost its data, from a replica that still holds it: every
  part at version 1, the keys, the journal and its numbering, the live sessions, under a new
  epoch (every replica's next sync is a full one), its change count going on from the replica's
  position. Refused when the store holds state of an older lineage (an older deployment's), or of
  the same lineage reseeded from another epoch, or from the same epoch by a replica that had seen
  as much of it.

  Input:
    KEYS[1] layout
    KEYS[2] epoch
    KEYS[3] lineage
    KEYS[4] parts
    KEYS[5] versions
    KEYS[6] changes
    KEYS[7] changeSeq
    KEYS[8] keys
    KEYS[9] keyOrder
    KEYS[10] journal
    KEYS[11] journalSeq
    KEYS[12] live
    KEYS[13] ancestry
    KEYS[14] reseededAt

    ARGV[1] layout version
    ARGV[2] lineage of the state
    ARGV[3] the epoch the state is of
    ARGV[4] the replica's position in that epoch
    ARGV[5] the last journal number given out
    ARGV[6] keys kept
    ARGV[7] journal size
    ARGV[8…] counted lists: parts (name, json), keys (kid, json), journal (seq, json) oldest
             first, live sessions (part, last use ms), ancestry ("<epoch>:<position>")

  Output:
    {1, cursor, epoch}: written
    {0}: refused: the store's state is of an older lineage, or of the same one and went at
         least as far into the newest epoch both states went through
]]
--@include "includes/nowMicros.lua"
--@include "includes/checkLayout.lua"
local stored = redis.call('GET', KEYS[3])
-- The lists, read once: the check needs the ancestry at their end.
local lists, i = {}, 8
for l = 1, 5 do
  local n = tonumber(ARGV[i])
  local width = l == 5 and 1 or 2
  lists[l] = {from = i + 1, n = n}
  i = i + 1 + width * n
end
if stored then
  if tonumber(stored) < tonumber(ARGV[2]) then return {0} end
  if tonumber(stored) == tonumber(ARGV[2]) then
    -- Into the newest epoch both states went through: the reseed's must have gone further.
    local storedAt = {}
    for point in string.gmatch(redis.call('GET', KEYS[13]) or '', '[^,]+') do
      local e, p = string.match(point, '^(%d*):(%d+)$')
      if e and storedAt[e] == nil then storedAt[e] = tonumber(p) end
    end
    local further = nil
    local function check(point)
      if further ~= nil then return end
      local e, p = string.match(point, '^(%d*):(%d+)$')
      if e and storedAt[e] ~= nil then further = tonumber(p) > storedAt[e] end
    end
    check(ARGV[3] .. ':' .. ARGV[4])
    for a = lists[5].from, lists[5].from + lists[5].n - 1 do check(ARGV[a]) end
    if not further then return {0} end
  end
end
-- Later than the epoch it replaces, even if Redis's clock went back.
local fresh = nowMicros()
if tonumber(fresh) <= tonumber(epoch) then fresh = string.format('%.0f', tonumber(epoch) + 1) end
redis.call('SET', KEYS[2], fresh)
redis.call('SET', KEYS[3], ARGV[2])
local ancestry = {ARGV[3] .. ':' .. ARGV[4]}
for a = lists[5].from, math.min(lists[5].from + lists[5].n - 1, lists[5].from + 14) do ancestry[#ancestry + 1] = ARGV[a] end
redis.call('SET', KEYS[13], table.concat(ancestry, ','))
if ARGV[3] == '' then
  redis.call('DEL', KEYS[14])
else
  local t = redis.call('TIME')
  redis.call('SET', KEYS[14], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
end
redis.call('DEL', KEYS[4], KEYS[5], KEYS[6], KEYS[8], KEYS[9], KEYS[10], KEYS[12])
redis.call('SET', KEYS[7], ARGV[4])
i = 8
local n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[5], ARGV[i], 1)
  i = i + 2
end
n = tonumber(ARGV[i]); i = i + 1
local keysFrom = i + 2 * math.max(0, n - tonumber(ARGV[6]))
for k = keysFrom, i + 2 * n - 1, 2 do
  redis.call('HSET', KEYS[8], ARGV[k], ARGV[k + 1])
  redis.call('RPUSH', KEYS[9], ARGV[k])
end
i = i + 2 * n
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('XADD', KEYS[10], 'MAXLEN', ARGV[7], ARGV[i] .. '-0', 'j', ARGV[i + 1])
  i = i + 2
end
if tonumber(redis.call('GET', KEYS[11]) or '0') < tonumber(ARGV[5]) then redis.call('SET', KEYS[11], ARGV[5]) end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  if redis.call('HEXISTS', KEYS[4], ARGV[i]) == 1 then redis.call('ZADD', KEYS[12], ARGV[i + 1], ARGV[i]) end
  i = i + 2
end
return {1, fresh .. ':' .. ARGV[4], fresh}
