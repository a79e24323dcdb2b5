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
local count = tonumber(redis.call('GET', KEYS[7]) or '0')
local e, since = string.match(ARGV[2], '^(%d+):(%d+)$')
local full = true
if e == epoch then
  since = tonumber(since)
  if since == count then
    full = false
  elseif since < count then
    local first = redis.call('XRANGE', KEYS[6], '-', '+', 'COUNT', 1)[1]
    if first and tonumber(string.match(first[1], '^(%d+)')) <= since + 1 then full = false end
  end
end
local reseededAt = redis.call('GET', KEYS[11])
local ago = -1
if reseededAt then
  local t = redis.call('TIME')
  ago = math.max(0, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(reseededAt))
end
local out = {full and 1 or 0, epoch .. ':' .. count, epoch, redis.call('GET', KEYS[3]) or '', count, redis.call('GET', KEYS[10]) or '', ago}
local records, keys = {}, {}
local parts, removed = {}, {}
if full then
  local all = redis.call('HGETALL', KEYS[4])
  for i = 1, #all, 2 do
    parts[#parts + 1] = {all[i], redis.call('HGET', KEYS[5], all[i]), all[i + 1]}
  end
  for _, entry in ipairs(redis.call('XRANGE', KEYS[6], '-', '+')) do
    local f = entry[2]
    for i = 1, #f, 2 do
      if f[i] == 'r' then records[#records + 1] = f[i + 1] end
    end
  end
  for _, kid in ipairs(redis.call('LRANGE', KEYS[9], 0, -1)) do
    keys[#keys + 1] = redis.call('HGET', KEYS[8], kid)
  end
else
  local last, names = {}, {}
  for _, entry in ipairs(redis.call('XRANGE', KEYS[6], (since + 1) .. '-0', '+')) do
    local f = entry[2]
    for i = 1, #f, 2 do
      local k, v = f[i], f[i + 1]
      if k == 'w' or k == 'd' then
        if not last[v] then names[#names + 1] = v end
        last[v] = k
      elseif k == 'r' then records[#records + 1] = v
      elseif k == 'k' then keys[#keys + 1] = v end
    end
  end
  for _, name in ipairs(names) do
    local json = redis.call('HGET', KEYS[4], name)
    if json then
      parts[#parts + 1] = {name, redis.call('HGET', KEYS[5], name), json}
    else
      removed[#removed + 1] = name
    end
  end
end
out[#out + 1] = #parts
for _, p in ipairs(parts) do
  out[#out + 1] = p[1]; out[#out + 1] = p[2]; out[#out + 1] = p[3]
end
for _, list in ipairs({removed, records, keys}) do
  out[#out + 1] = #list
  for _, v in ipairs(list) do out[#out + 1] = v end
end
return out
