--[[
  One commit of commit-13.lua, whose arguments start at ARGV[j] (its header numbers them from
  1): applied or refused, and its answer.
  Needs: the KEYS and the ARGV[1…7] of commit-13.lua, `epoch` (checkLayout), and the includes
  it lists.
]]
local function commitOne(j)
  local function arg(k) return ARGV[j + k - 1] end
  local outcomeKey = KEYS[13] .. arg(1)
  if redis.call('EXISTS', outcomeKey) == 1 then return {0, 'late'} end
  local function refuse(reason)
    redis.call('SET', outcomeKey, 'void', 'PX', ARGV[2])
    return {0, reason}
  end
  if pastDeadline(arg(3)) then return refuse('late') end
  if arg(2) ~= epoch then return refuse('conflict') end
  local i = j + 14
  local n = tonumber(ARGV[i]); i = i + 1
  local own = {}
  for _ = 1, n do
    own[ARGV[i]] = true
    i = i + 1
  end
  local before
  if arg(11) ~= '' then
    local count = tonumber(redis.call('GET', KEYS[6]) or '0')
    local since = changesKept(KEYS[5], arg(11), epoch, count)
    if not since then
      refuse('stale')
      return {0, 'stale', 0}
    end
    before = redis.call('XRANGE', KEYS[5], (since + 1) .. '-0', '+')
    if newsIn(before, arg(12), arg(13), own, arg(14) == '1') then
      refuse('stale')
      return changesIn(before, KEYS[3], KEYS[4], {0, 'stale', 1, count}, arg(12))
    end
  end
  n = tonumber(ARGV[i]); i = i + 1
  for _ = 1, n do
    if tonumber(redis.call('HGET', KEYS[4], ARGV[i]) or '0') ~= tonumber(ARGV[i + 1]) then return refuse('conflict') end
    i = i + 2
  end
  if arg(6) ~= '' then
    if not redis.call('ZSCORE', KEYS[12], arg(6)) and redis.call('ZCARD', KEYS[12]) >= tonumber(arg(7)) then
      return refuse('full')
    end
    redis.call('ZADD', KEYS[12], arg(5), arg(6))
  end
  if arg(4) ~= '' then redis.call('ZADD', KEYS[12], 'XX', 'GT', arg(5), arg(4)) end
  local change = {}
  n = tonumber(ARGV[i]); i = i + 1
  for _ = 1, n do
    local name = ARGV[i]
    if ARGV[i + 1] == 'w' then
      local made = redis.call('HSET', KEYS[3], name, ARGV[i + 2]) == 1
      redis.call('HINCRBY', KEYS[4], name, 1)
      change[#change + 1] = made and 'n' or 'w'
      change[#change + 1] = name
    else
      removePart(KEYS[3], KEYS[4], KEYS[12], name, change)
    end
    i = i + 3
  end
  n = tonumber(ARGV[i]); i = i + 1
  for _ = 1, n do
    change[#change + 1] = 'r'
    change[#change + 1] = ARGV[i]
    i = i + 1
  end
  n = tonumber(ARGV[i]); i = i + 1
  for _ = 1, n do
    if redis.call('HSETNX', KEYS[7], ARGV[i], ARGV[i + 1]) == 1 then
      redis.call('RPUSH', KEYS[8], ARGV[i])
      change[#change + 1] = 'k'
      change[#change + 1] = ARGV[i + 1]
    end
    i = i + 2
  end
  while redis.call('LLEN', KEYS[8]) > tonumber(ARGV[6]) do
    redis.call('HDEL', KEYS[7], redis.call('LPOP', KEYS[8]))
  end
  logChange(KEYS[5], KEYS[6], change, ARGV[3], arg(12))
  local seq = 0
  if arg(9) == '1' then
    seq = redis.call('INCR', KEYS[10])
    redis.call('XADD', KEYS[9], 'MAXLEN', ARGV[4], seq .. '-0', 'j', arg(10))
    redis.call('XADD', KEYS[11], 'MAXLEN', ARGV[5], '*', 's', seq, 'j', arg(10))
  end
  n = tonumber(ARGV[i]); i = i + 1
  for _ = 1, n do
    redis.call('XADD', KEYS[11], 'MAXLEN', ARGV[5], '*', 'j', ARGV[i])
    i = i + 1
  end
  if arg(8) == '2' then
    local written = {}
    for w = 1, #change, 2 do
      if change[w] == 'w' or change[w] == 'n' then written[change[w + 1]] = true end
    end
    for _, name in ipairs(redis.call('HKEYS', KEYS[3])) do
      if not written[name] then
        redis.call('HDEL', KEYS[3], name)
        redis.call('HDEL', KEYS[4], name)
      end
    end
    for _, name in ipairs(redis.call('ZRANGE', KEYS[12], 0, -1)) do
      if not written[name] then redis.call('ZREM', KEYS[12], name) end
    end
  end
  if arg(8) ~= '0' then
    redis.call('DEL', KEYS[9])
    redis.call('XTRIM', KEYS[5], 'MAXLEN', 0)
    redis.call('INCR', KEYS[6])
    redis.call('XTRIM', KEYS[11], 'MAXLEN', 0)
    redis.call('XADD', KEYS[11], 'MAXLEN', ARGV[5], '*', 'j', ARGV[7])
  end
  local position = tonumber(redis.call('GET', KEYS[6]) or '0')
  redis.call('SET', outcomeKey, seq .. ':' .. position, 'PX', ARGV[2])
  if before then return changesIn(before, KEYS[3], KEYS[4], {1, seq, position}, arg(12)) end
  return {1, seq, position}
end
