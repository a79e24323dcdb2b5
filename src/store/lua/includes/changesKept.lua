--[[
  Reads a cursor ("<epoch>:<n>") against the change log: the position after which changes are
  wanted, when the cursor is of `epoch` and the log still holds every change after it; nil else
  (the changes must be read in full).
  Needs: changesKey, epoch, count (the number of the last change).
]]
local function changesKept(changesKey, cursor, epoch, count)
  local e, since = string.match(cursor, '^(%d+):(%d+)$')
  if e ~= epoch then return nil end
  since = tonumber(since)
  if since == count then return since end
  if since > count then return nil end
  local first = redis.call('XRANGE', changesKey, '-', '+', 'COUNT', 1)[1]
  if first and tonumber(string.match(first[1], '^(%d+)')) <= since + 1 then return since end
  return nil
end
