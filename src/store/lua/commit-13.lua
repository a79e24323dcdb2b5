--[[
  One request's changes, all or nothing: refused with nothing applied when its id was seen
  before or settled, past its deadline, in another epoch, when another replica's change since
  its basis is news to it (core/state-store.ts, RunBasis), when a part it read moved on, or when
  the session it admits would be one too many. Its outcome is kept under its id for `settle`.

  Input:
    KEYS[1] layout
    KEYS[2] epoch
    KEYS[3] parts
    KEYS[4] versions
    KEYS[5] changes
    KEYS[6] changeSeq
    KEYS[7] keys
    KEYS[8] keyOrder
    KEYS[9] journal
    KEYS[10] journalSeq
    KEYS[11] feed
    KEYS[12] live
    KEYS[13] outcomePrefix

    ARGV[1] layout version
    ARGV[2] commit id
    ARGV[3] the epoch the request read in
    ARGV[4] deadline (wall-clock ms)
    ARGV[5] how long the outcome is kept (ms)
    ARGV[6] change log size
    ARGV[7] journal size
    ARGV[8] feed size
    ARGV[9] keys kept
    ARGV[10] touched part ("" for none)
    ARGV[11] its time (wall-clock ms)
    ARGV[12] admitted part ("" for none)
    ARGV[13] the most live sessions
    ARGV[14] "1": empty the journal, the change log and the feed after the writes; "2": that,
             and remove every part not written and end every live session not written (a reset)
    ARGV[15] the event the feed then starts with
    ARGV[16] "1" when a journal record follows
    ARGV[17] the journal record
    ARGV[18] the basis: the cursor the request's answer was made at ("" for none: nothing is
             checked but the reads, and no changes are answered)
    ARGV[19] the origin: the replica committing ("" for none)
    ARGV[20] the prefix of the parts a request reads only when it names them (a session's)
    ARGV[21] "1" when the request looked for a record it did not find (records are news)
    ARGV[22…] counted lists: own parts (under the prefix, read), reads (name, version),
              writes (name, "w"|"d", json), records, keys (kid, json), events

  Output:
    {1, seq, position}: applied; seq is the journal entry's number, 0 for none; position the
    number of the epoch's last change; with a basis followed by the changes before this
    commit's since the basis, as counted lists: parts (name, version, json), removed names,
    records, keys
    {0, 'late'}: past the deadline, or the id was seen or settled before
    {0, 'conflict'}: another epoch, or a part read has moved on
    {0, 'stale', 1, position, <the changes since the basis, as above>}: another replica's
    change since the basis is news to the request; {0, 'stale', 0}: the change log no longer
    holds every change since the basis
    {0, 'full'}: the admitted session would be one more than the most
]]
--@include "includes/nowMicros.lua"
--@include "includes/checkLayout.lua"
--@include "includes/pastDeadline.lua"
--@include "includes/logChange.lua"
--@include "includes/removePart.lua"
--@include "includes/changesKept.lua"
--@include "includes/changesIn.lua"
--@include "includes/newsIn.lua"
local outcomeKey = KEYS[13] .. ARGV[2]
if redis.call('EXISTS', outcomeKey) == 1 then return {0, 'late'} end
local function refuse(reason)
  redis.call('SET', outcomeKey, 'void', 'PX', ARGV[5])
  return {0, reason}
end
if pastDeadline(ARGV[4]) then return refuse('late') end
if ARGV[3] ~= epoch then return refuse('conflict') end
local i = 22
local n = tonumber(ARGV[i]); i = i + 1
local own = {}
for _ = 1, n do
  own[ARGV[i]] = true
  i = i + 1
end
local before
if ARGV[18] ~= '' then
  local count = tonumber(redis.call('GET', KEYS[6]) or '0')
  local since = changesKept(KEYS[5], ARGV[18], epoch, count)
  if not since then
    refuse('stale')
    return {0, 'stale', 0}
  end
  before = redis.call('XRANGE', KEYS[5], (since + 1) .. '-0', '+')
  if newsIn(before, ARGV[19], ARGV[20], own, ARGV[21] == '1') then
    refuse('stale')
    return changesIn(before, KEYS[3], KEYS[4], {0, 'stale', 1, count})
  end
end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  if tonumber(redis.call('HGET', KEYS[4], ARGV[i]) or '0') ~= tonumber(ARGV[i + 1]) then return refuse('conflict') end
  i = i + 2
end
if ARGV[12] ~= '' then
  if not redis.call('ZSCORE', KEYS[12], ARGV[12]) and redis.call('ZCARD', KEYS[12]) >= tonumber(ARGV[13]) then
    return refuse('full')
  end
  redis.call('ZADD', KEYS[12], ARGV[11], ARGV[12])
end
if ARGV[10] ~= '' then redis.call('ZADD', KEYS[12], 'XX', 'GT', ARGV[11], ARGV[10]) end
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
while redis.call('LLEN', KEYS[8]) > tonumber(ARGV[9]) do
  redis.call('HDEL', KEYS[7], redis.call('LPOP', KEYS[8]))
end
logChange(KEYS[5], KEYS[6], change, ARGV[6], ARGV[19])
local seq = 0
if ARGV[16] == '1' then
  seq = redis.call('INCR', KEYS[10])
  redis.call('XADD', KEYS[9], 'MAXLEN', ARGV[7], seq .. '-0', 'j', ARGV[17])
  redis.call('XADD', KEYS[11], 'MAXLEN', ARGV[8], '*', 's', seq, 'j', ARGV[17])
end
n = tonumber(ARGV[i]); i = i + 1
for _ = 1, n do
  redis.call('XADD', KEYS[11], 'MAXLEN', ARGV[8], '*', 'j', ARGV[i])
  i = i + 1
end
if ARGV[14] == '2' then
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
if ARGV[14] ~= '0' then
  redis.call('DEL', KEYS[9])
  redis.call('XTRIM', KEYS[5], 'MAXLEN', 0)
  redis.call('INCR', KEYS[6])
  redis.call('XTRIM', KEYS[11], 'MAXLEN', 0)
  redis.call('XADD', KEYS[11], 'MAXLEN', ARGV[8], '*', 'j', ARGV[15])
end
local position = tonumber(redis.call('GET', KEYS[6]) or '0')
redis.call('SET', outcomeKey, seq .. ':' .. position, 'PX', ARGV[5])
if before then return changesIn(before, KEYS[3], KEYS[4], {1, seq, position}) end
return {1, seq, position}
