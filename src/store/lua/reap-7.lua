--[[
  Ends the live sessions unused since before a time: their parts are removed, as a commit would.

  Input:
    KEYS[1] layout
    KEYS[2] epoch
    KEYS[3] parts
    KEYS[4] versions
    KEYS[5] changes
    KEYS[6] changeSeq
    KEYS[7] live

    ARGV[1] layout version
    ARGV[2] idle before (wall-clock ms)
    ARGV[3] the most sessions ended by one call
    ARGV[4] change log size
    ARGV[5] deadline (wall-clock ms)

  Output:
    the ended sessions' part names
    'late': past the deadline, nothing done
]]
--@include "includes/nowMicros.lua"
--@include "includes/checkLayout.lua"
--@include "includes/pastDeadline.lua"
--@include "includes/logChange.lua"
--@include "includes/removePart.lua"
if pastDeadline(ARGV[5]) then return 'late' end
local parts = redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local change = {}
for _, name in ipairs(parts) do
  removePart(KEYS[3], KEYS[4], KEYS[7], name, change)
end
logChange(KEYS[5], KEYS[6], change, ARGV[4], '')
return parts
