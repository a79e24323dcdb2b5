/**
 * The Lua scripts of the Redis store: one per operation, so each is one round trip and atomic
 * (Redis runs a script to its end before any other command). Plain EVAL scripts, which Redis 7.0
 * runs as ioredis sends them (EVALSHA, EVAL when the server does not know the script yet).
 *
 * Every script gets the twelve keys of redis-layout.ts (KEY_ORDER) and ARGV[1], the layout
 * version. The prelude refuses a store written in another layout, and writes the layout and a new
 * epoch into a store that has none (new, or emptied by a Redis restart without persistence).
 */

const PRELUDE = `
local found = redis.call('GET', KEYS[1])
if found and found ~= ARGV[1] then
  return redis.error_reply('MSBLAYOUT ' .. found)
end
if not found then redis.call('SET', KEYS[1], ARGV[1]) end
local epoch = redis.call('GET', KEYS[2])
if not epoch then
  local t = redis.call('TIME')
  epoch = t[1] .. string.format('%06d', tonumber(t[2]))
  redis.call('SET', KEYS[2], epoch)
end
local function pastDeadline(ms)
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ms)
end
local function logChange(change, cap)
  if #change == 0 then return end
  local n = redis.call('INCR', KEYS[6])
  redis.call('XADD', KEYS[5], 'MAXLEN', cap, n .. '-0', unpack(change))
end
local function removePart(name, change)
  if string.sub(name, 1, 2) == 's:' then redis.call('ZREM', KEYS[12], string.sub(name, 3)) end
  redis.call('HDEL', KEYS[4], name)
  if redis.call('HDEL', KEYS[3], name) == 1 then
    change[#change + 1] = 'd'
    change[#change + 1] = name
  end
end
`;

/** The open check: the prelude alone. */
export const OPEN_LUA = `${PRELUDE}
return 'OK'`;

/**
 * ARGV[2]: the cursor, "<epoch>:<n>" or anything else for a full answer. The answer, flat:
 * full (0/1), cursor, then four counted lists: parts (name, version, json), removed names,
 * records, keys.
 */
export const SYNC_LUA = `${PRELUDE}
local count = tonumber(redis.call('GET', KEYS[6]) or '0')
local e, since = string.match(ARGV[2], '^(%d+):(%d+)$')
local full = true
if e == epoch then
  since = tonumber(since)
  if since == count then
    full = false
  elseif since < count then
    local first = redis.call('XRANGE', KEYS[5], '-', '+', 'COUNT', 1)[1]
    if first and tonumber(string.match(first[1], '^(%d+)')) <= since + 1 then full = false end
  end
end
local out = {full and 1 or 0, epoch .. ':' .. count}
local records, keys = {}, {}
local parts, removed = {}, {}
if full then
  local all = redis.call('HGETALL', KEYS[3])
  for i = 1, #all, 2 do
    parts[#parts + 1] = {all[i], redis.call('HGET', KEYS[4], all[i]), all[i + 1]}
  end
  for _, entry in ipairs(redis.call('XRANGE', KEYS[5], '-', '+')) do
    local f = entry[2]
    for i = 1, #f, 2 do
      if f[i] == 'r' then records[#records + 1] = f[i + 1] end
    end
  end
  for _, kid in ipairs(redis.call('LRANGE', KEYS[8], 0, -1)) do
    keys[#keys + 1] = redis.call('HGET', KEYS[7], kid)
  end
else
  local last, names = {}, {}
  for _, entry in ipairs(redis.call('XRANGE', KEYS[5], (since + 1) .. '-0', '+')) do
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
    local json = redis.call('HGET', KEYS[3], name)
    if json then
      parts[#parts + 1] = {name, redis.call('HGET', KEYS[4], name), json}
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
return out`;

/**
 * ARGV: 2 deadlineMs, 3 changeLogSize, 4 journalSize, 5 feedSize, 6 keysSize, 7 touched session
 * ("" for none), 8 its time, 9 "1" when a journal record follows, 10 the record, then counted
 * lists from 11: reads (name, version), writes (name, "w"|"d", json), records, keys (kid, json),
 * events. Answers {1, seq (0: none)} or {0, "late"|"conflict"}, having applied nothing then.
 */
export const COMMIT_LUA = `${PRELUDE}
if pastDeadline(ARGV[2]) then return {0, 'late'} end
local i = 11
local n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  if tonumber(redis.call('HGET', KEYS[4], ARGV[i]) or '0') ~= tonumber(ARGV[i + 1]) then return {0, 'conflict'} end
  i = i + 2
end
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[12], 'GT', ARGV[8], ARGV[7]) end
local change = {}
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  local name = ARGV[i]
  if ARGV[i + 1] == 'w' then
    redis.call('HSET', KEYS[3], name, ARGV[i + 2])
    redis.call('HINCRBY', KEYS[4], name, 1)
    change[#change + 1] = 'w'
    change[#change + 1] = name
  else
    removePart(name, change)
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
logChange(change, ARGV[3])
local seq = 0
if ARGV[9] == '1' then
  seq = redis.call('INCR', KEYS[10])
  redis.call('XADD', KEYS[9], 'MAXLEN', ARGV[4], seq .. '-0', 'j', ARGV[10])
  redis.call('XADD', KEYS[11], 'MAXLEN', ARGV[5], '*', 's', seq, 'j', ARGV[10])
end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('XADD', KEYS[11], 'MAXLEN', ARGV[5], '*', 'j', ARGV[i])
  i = i + 1
end
return {1, seq}`;

/**
 * ARGV: 2 idleBeforeMs, 3 limit, 4 changeLogSize, 5 deadline. Answers the ids of the sessions
 * ended, or "late" with nothing done.
 */
export const REAP_LUA = `${PRELUDE}
if pastDeadline(ARGV[5]) then return 'late' end
local ids = redis.call('ZRANGEBYSCORE', KEYS[12], '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local change = {}
for _, id in ipairs(ids) do
  removePart('s:' .. id, change)
  redis.call('ZREM', KEYS[12], id)
end
logChange(change, ARGV[4])
return ids`;

/**
 * ARGV: 2 feedSize, 3 the reset event, 4 deadline. The journal, the change log (and the records it
 * carries) and the feed emptied; the change count moves on, so every replica's next sync is a full
 * one. Answers "late" with nothing done past the deadline.
 */
export const CLEAR_LUA = `${PRELUDE}
if pastDeadline(ARGV[4]) then return 'late' end
redis.call('DEL', KEYS[9])
redis.call('XTRIM', KEYS[5], 'MAXLEN', 0)
redis.call('INCR', KEYS[6])
redis.call('XTRIM', KEYS[11], 'MAXLEN', 0)
redis.call('XADD', KEYS[11], 'MAXLEN', ARGV[2], '*', 'j', ARGV[3])
return 'OK'`;

export const SCRIPTS = {
  msbOpen: OPEN_LUA,
  msbSync: SYNC_LUA,
  msbCommit: COMMIT_LUA,
  msbReap: REAP_LUA,
  msbClear: CLEAR_LUA,
} as const;

export type ScriptName = keyof typeof SCRIPTS;
