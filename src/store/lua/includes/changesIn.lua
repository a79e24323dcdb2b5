--[[
  What change log entries (XRANGE's answer) changed, appended to `out` as counted lists: parts
  (name, version, json: each once, at its latest version), removed names, records, keys. The
  entries of origin `skip` are left out (nil: none is): that replica's objects hold them.
  Needs: partsKey, versionsKey.
]]
local function changesIn(entries, partsKey, versionsKey, out, skip)
  local records, keys, removed = {}, {}, {}
  local last, names = {}, {}
  for _, entry in ipairs(entries) do
    local f = entry[2]
    local from = (f[1] == 'o' and f[2] == skip) and #f + 1 or 1
    for i = from, #f, 2 do
      local k, v = f[i], f[i + 1]
      if k == 'w' or k == 'n' or k == 'd' then
        if not last[v] then names[#names + 1] = v end
        last[v] = k
      elseif k == 'r' then records[#records + 1] = v
      elseif k == 'k' then keys[#keys + 1] = v end
    end
  end
  local parts = {}
  for _, name in ipairs(names) do
    local json = redis.call('HGET', partsKey, name)
    if json then
      parts[#parts + 1] = name
      parts[#parts + 1] = redis.call('HGET', versionsKey, name)
      parts[#parts + 1] = json
    else
      removed[#removed + 1] = name
    end
  end
  out[#out + 1] = #parts / 3
  for _, v in ipairs(parts) do out[#out + 1] = v end
  for _, list in ipairs({removed, records, keys}) do
    out[#out + 1] = #list
    for _, v in ipairs(list) do out[#out + 1] = v end
  end
  return out
end
