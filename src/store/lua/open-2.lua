--[[
  Opens the store: refuses one of another layout, and writes the layout and an epoch into an
  empty one.

  Input:
    KEYS[1] layout
    KEYS[2] epoch

    ARGV[1] layout version

  Output:
    'OK'
    error 'MSBLAYOUT <found>': the store is of another layout
]]
--@include "includes/nowMicros.lua"
--@include "includes/checkLayout.lua"
return 'OK'
