--[[
  Writes a whole state into a store that lost its data, from a replica that still holds it: every
  part at version 1, the keys, the journal and its numbering, the live sessions, under a new
  epoch (every replica's next sync is a full one). Refused when the store holds state of an
  older or the same lineage (seeded first by a replica of an older deployment, or of this one).

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

    ARGV[1] layout version
    ARGV[2] lineage of the state
    ARGV[3] the last journal number given out
    ARGV[4] keys kept
    ARGV[5] journal size
    ARGV[6…] counted lists: parts (name, json), keys (kid, json), journal (seq, json) oldest
             first, live sessions (part, last use ms)

  Output:
    {1, cursor, epoch}: written
    {0}: refused, the store's state is of an older or the same lineage
]]
--@include "includes/nowMicros.lua"
--@include "includes/checkLayout.lua"
local stored = redis.call('GET', KEYS[3])
if stored and tonumber(stored) <= tonumber(ARGV[2]) then return {0} end
local fresh = nowMicros()
if fresh == epoch then fresh = string.format('%.0f', tonumber(epoch) + 1) end
redis.call('SET', KEYS[2], fresh)
redis.call('SET', KEYS[3], ARGV[2])
redis.call('DEL', KEYS[4], KEYS[5], KEYS[6], KEYS[8], KEYS[9], KEYS[10], KEYS[12])
redis.call('SET', KEYS[7], 0)
local i = 6
local n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[5], ARGV[i], 1)
  i = i + 2
end
n = tonumber(ARGV[i]); i = i + 1
local keysFrom = i + 2 * math.max(0, n - tonumber(ARGV[4]))
for k = keysFrom, i + 2 * n - 1, 2 do
  redis.call('HSET', KEYS[8], ARGV[k], ARGV[k + 1])
  redis.call('RPUSH', KEYS[9], ARGV[k])
end
i = i + 2 * n
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('XADD', KEYS[10], 'MAXLEN', ARGV[5], ARGV[i] .. '-0', 'j', ARGV[i + 1])
  i = i + 2
end
if tonumber(redis.call('GET', KEYS[11]) or '0') < tonumber(ARGV[3]) then redis.call('SET', KEYS[11], ARGV[3]) end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  if redis.call('HEXISTS', KEYS[4], ARGV[i]) == 1 then redis.call('ZADD', KEYS[12], ARGV[i + 1], ARGV[i]) end
  i = i + 2
end
return {1, fresh .. ':0', fresh}
