--[[
  Appends one entry to the change log (a stream whose ids count the changes: `<n>-0`), holding
  what a commit changed as field/value pairs: w (written part), d (removed part), r (record),
  k (key). Nothing is logged for no change.
  Needs: changesKey, changeSeqKey (the keys), cap (the change log's size).
]]
local function logChange(changesKey, changeSeqKey, change, cap)
  if #change == 0 then return end
  local n = redis.call('INCR', changeSeqKey)
  redis.call('XADD', changesKey, 'MAXLEN', cap, n .. '-0', unpack(change))
end
