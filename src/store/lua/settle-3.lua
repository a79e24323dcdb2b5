--[[
  The outcome of a commit whose answer was lost: applied (its journal number), or not; a commit
  not applied by now never is (its id is kept as settled, and the commit script refuses it).

  Input:
    KEYS[1] layout
    KEYS[2] epoch
    KEYS[3] outcomePrefix

    ARGV[1] layout version
    ARGV[2] commit id
    ARGV[3] how long the outcome is kept (ms)

  Output:
    {1, seq, position}: applied; seq is the journal entry's number, 0 for none; position the
    epoch's position after it
    {0}: not applied, and never will be
]]
--@include "includes/nowMicros.lua"
--@include "includes/checkLayout.lua"
local key = KEYS[3] .. ARGV[2]
local outcome = redis.call('GET', key)
if not outcome then
  redis.call('SET', key, 'void', 'PX', ARGV[3])
  return {0}
end
if outcome == 'void' then return {0} end
local seq, position = string.match(outcome, '^(%d+):(%d+)$')
return {1, tonumber(seq), tonumber(position)}
