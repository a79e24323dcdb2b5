--[[
  What changed since a cursor: parts (each once, at its latest version), removed parts, records
  and keys appended. In full (every part and key, the records the change log keeps) when the
  cursor is of another epoch or older than the change log keeps.

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
    KEYS[10] ancestry
    KEYS[11] reseededAt

    ARGV[1] layout version
    ARGV[2] cursor, "<epoch>:<n>" (anything else: in full)

  Output, flat:
    full (0/1), the next cursor, the epoch, the lineage ("" for none), the position (the
    number of the last change), where the epoch's state came from ("<epoch>:<position>"
    newest first, comma-separated; "" for none), how long ago (ms) the state was written back
    from a replica's (-1: seeded fresh), then counted lists:
    parts (name, version, json), removed names, records, keys
]]
--@include "includes/nowMicros.lua"
--@include "includes/checkLayout.lua"
--@include "includes/changesKept.lua"
--@include "includes/changesIn.lua"
local count = tonumber(redis.call('GET', KEYS[7]) or '0')
local since = changesKept(KEYS[6], ARGV[2], epoch, count)
local reseededAt = redis.call('GET', KEYS[11])
local ago = -1
if reseededAt then
  local t = redis.call('TIME')
  ago = math.max(0, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(reseededAt))
end
local out = {since and 0 or 1, epoch .. ':' .. count, epoch, redis.call('GET', KEYS[3]) or '', count, redis.call('GET', KEYS[10]) or '', ago}
if since then
  return changesIn(redis.call('XRANGE', KEYS[6], (since + 1) .. '-0', '+'), KEYS[4], KEYS[5], out)
end
local all = redis.call('HGETALL', KEYS[4])
out[#out + 1] = #all / 2
for i = 1, #all, 2 do
  out[#out + 1] = all[i]; out[#out + 1] = redis.call('HGET', KEYS[5], all[i]); out[#out + 1] = all[i + 1]
end
out[#out + 1] = 0
local records = {}
for _, entry in ipairs(redis.call('XRANGE', KEYS[6], '-', '+')) do
  local f = entry[2]
  for i = 1, #f, 2 do
    if f[i] == 'r' then records[#records + 1] = f[i + 1] end
  end
end
out[#out + 1] = #records
for _, v in ipairs(records) do out[#out + 1] = v end
local kids = redis.call('LRANGE', KEYS[9], 0, -1)
out[#out + 1] = #kids
for _, kid in ipairs(kids) do out[#out + 1] = redis.call('HGET', KEYS[8], kid) end
return out
