--[[
  Commits, one after the other, each all or nothing: one request's changes, refused with nothing
  applied when its id was seen before or settled, past its deadline, in another epoch, when
  another replica's change since its basis is news to it (core/state-store.ts, RunBasis), when a
  part it read moved on, or when the session it admits would be one too many. Each outcome is
  kept under its commit's id for `settle`. The commits a replica makes at once come in one call.

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
    ARGV[2] how long an outcome is kept (ms)
    ARGV[3] change log size
    ARGV[4] journal size
    ARGV[5] feed size
    ARGV[6] keys kept
    ARGV[7] the event the feed starts with after a reset
    ARGV[8] how many commits follow
    ARGV[9…] each commit: the number of its arguments, then (numbered from 1):
      1 commit id
      2 the epoch the request read in
      3 deadline (wall-clock ms)
      4 touched part ("" for none)
      5 its time (wall-clock ms)
      6 admitted part ("" for none)
      7 the most live sessions
      8 "1": empty the journal, the change log and the feed after the writes; "2": that, and
        remove every part not written and end every live session not written (a reset)
      9 "1" when a journal record follows
      10 the journal record
      11 the basis: the cursor the request's answer was made at ("" for none: nothing is
         checked but the reads, and no changes are answered)
      12 the origin: the replica committing ("" for none)
      13 the prefix of the parts a request reads only when it names them (a session's)
      14 "1" when the request looked for a record it did not find (records are news)
      15… counted lists: own parts (under the prefix, read), reads (name, version),
          writes (name, "w"|"d", json), records, keys (kid, json), events

  Output, flat: for each commit, the number of its answer's items, then its answer:
    {1, seq, position}: applied; seq is the journal entry's number, 0 for none; position the
    number of the epoch's last change; with a basis followed by the changes of other origins
    since the basis, before this commit, as counted lists: parts (name, version, json), removed
    names, records, keys
    {0, 'late'}: past the deadline, or the id was seen or settled before
    {0, 'conflict'}: another epoch, or a part read has moved on
    {0, 'stale', 1, position, <the changes of other origins since the basis>}: another replica's
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
--@include "includes/commitOne.lua"
local out = {}
local at = 9
for _ = 1, tonumber(ARGV[8]) do
  local answer = commitOne(at + 1)
  out[#out + 1] = #answer
  for _, v in ipairs(answer) do out[#out + 1] = v end
  at = at + 1 + tonumber(ARGV[at])
end
return out
