--[[
  Appends one entry to the change log (a stream whose ids count the changes: `<n>-0`): first
  `o` (the origin, the replica whose commit made it; "" for the store's own, a reap), then what
  changed as field/value pairs: n (part made), w (part written), d (part removed), r (record),
  k (key). Nothing is logged for no change.
  Needs: changesKey, changeSeqKey (the keys), cap (the change log's size), origin.
]]
local function logChange(changesKey, changeSeqKey, change, cap, origin)
  if #change == 0 then return end
  local n = redis.call('INCR', changeSeqKey)
  redis.call('XADD', changesKey, 'MAXLEN', cap, n .. '-0', 'o', origin, unpack(change))
end
