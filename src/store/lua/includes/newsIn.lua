--[[
  Whether change log entries (XRANGE's answer) hold news for a request (core/state-store.ts,
  RunBasis): a change of another origin than `origin` that is not a write of a part named under
  `prefix` outside `own` (a set: name → true). A part made or removed, and a key, are always
  news; a record only when `recordsRead`.
]]
local function newsIn(entries, origin, prefix, own, recordsRead)
  for _, entry in ipairs(entries) do
    local f = entry[2]
    if f[1] ~= 'o' or f[2] ~= origin then
      for i = 1, #f, 2 do
        local k, v = f[i], f[i + 1]
        if k == 'n' or k == 'd' or k == 'k' or (k == 'r' and recordsRead) then return true end
        if k == 'w' and (own[v] or string.sub(v, 1, #prefix) ~= prefix) then return true end
      end
    end
  end
  return false
end
