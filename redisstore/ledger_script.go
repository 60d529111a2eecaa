package redisstore

import "github.com/redis/go-redis/v9"

// The ledger's scripts keep a run in three keys: KEYS[1] a hash, KEYS[2]
// and KEYS[3] sorted sets of its entries ("group:position", scored by
// their order), those dropped first (reads, failures, refusals) and the
// others. The hash holds, for each group of calls of one tool with one
// input (a digest): s:G:P the entry's status code, its flag ("*" for a
// fallback's alternative, "-" otherwise) and its key; r:G:P the entry;
// o:G:P the claim of the call that holds a pending entry's intent; n:G
// the next position; k:G the entries kept; c:G and f:G the calls and
// failed calls counted; x:G whether the last to end was final; and for the
// run: total, t:TOOL, seq. Status codes: i pending, o open, d answered,
// u unknown, f failed, l refused (see run.Status). They follow the machine
// of run.Ledger's doc, and answer an error reply starting "CORRUPT" for an
// entry they cannot read.
const ledgerLib = `
local h = KEYS[1]
local function num(f) return tonumber(redis.call('HGET', h, f) or '0') end
local function counted(c) return c ~= 'o' and c ~= 'l' end
local function failed(c) return c == 'u' or c == 'f' end
local function b2i(b) if b then return 1 end return 0 end
local codes = {i = true, o = true, d = true, u = true, f = true, l = true}
local function corrupt(m) return redis.error_reply('CORRUPT the entry ' .. m .. ' of the run cannot be read') end
local function count(g, tool, d)
  if d == 0 then return end
  redis.call('HINCRBY', h, 'total', d)
  redis.call('HINCRBY', h, 't:' .. tool, d)
  redis.call('HINCRBY', h, 'c:' .. g, d)
end
local function counts(g, tool)
  return {num('total'), num('t:' .. tool), num('c:' .. g), num('f:' .. g), num('x:' .. g)}
end
local function expire(ms)
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ms) end
end
`

// beginScript records a call's intent or finds the earlier entry it
// continues (see run.Ledger). ARGV: group, first position, read-only,
// alternative, the entry, tool, key, max entries, TTL in ms, claim. It
// answers {code, position, the entry found or false, new, total, tool,
// identical, identical failed, final}: code "new" for an entry recorded
// now, else the status code of the entry found.
var beginScript = redis.NewScript(ledgerLib + `
local g, start, ro, alt, tool, claim = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4] == '1', ARGV[6], ARGV[10]
local function takes(c)
  if ro then return c ~= 'l' end
  return c == 'i' or c == 'o' or c == 'd' or c == 'u'
end
local n = num('n:' .. g)
local first, own
for p = start, n - 1 do
  local m = g .. ':' .. p
  local st = redis.call('HGET', h, 's:' .. m)
  if st then
    local c = string.sub(st, 1, 1)
    if not codes[c] or not redis.call('HEXISTS', h, 'r:' .. m) then return corrupt(m) end
    if c == 'i' and claim ~= '' and redis.call('HGET', h, 'o:' .. m) == claim then
      own = p
      break
    end
    if not first and takes(c) then first = p end
  end
end
if own then
  -- The caller's own intent, recorded by a Begin whose reply was lost: a
  -- new call, counted once, with the counts before it.
  local m = g .. ':' .. own
  local st = redis.call('HGET', h, 's:' .. m)
  local a = string.sub(st, 2, 2) == '*'
  local cs = counts(g, tool)
  local d = b2i(not a)
  expire(ARGV[9])
  return {'i', own, redis.call('HGET', h, 'r:' .. m), 1, cs[1] - d, cs[2] - d, cs[3] - d, cs[4], cs[5]}
end
if first then
  local m = g .. ':' .. first
  local st = redis.call('HGET', h, 's:' .. m)
  local c, a = string.sub(st, 1, 1), string.sub(st, 2, 2) == '*'
  local body = redis.call('HGET', h, 'r:' .. m)
  local res = {c, first, body, 0, 0, 0, 0, 0, 0}
  if c == 'o' then
    local cs = counts(g, tool)
    res = {c, first, body, 1, cs[1], cs[2], cs[3], cs[4], cs[5]}
    if not a then count(g, tool, 1) end
    redis.call('HSET', h, 's:' .. m, 'i' .. string.sub(st, 2), 'o:' .. m, claim)
  end
  expire(ARGV[9])
  return res
end
local p = math.max(n, start)
local m = g .. ':' .. p
local cs = counts(g, tool)
local fl = '-'
if alt then fl = '*' end
redis.call('HSET', h, 's:' .. m, 'i' .. fl .. ARGV[7], 'r:' .. m, ARGV[5], 'o:' .. m, claim, 'n:' .. g, p + 1)
redis.call('HINCRBY', h, 'k:' .. g, 1)
if not alt then count(g, tool, 1) end
local seq = redis.call('HINCRBY', h, 'seq', 1)
if ro then redis.call('ZADD', KEYS[2], seq, m) else redis.call('ZADD', KEYS[3], seq, m) end
local max = tonumber(ARGV[8])
while redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3]) > max do
  local z = KEYS[2]
  if redis.call('ZCARD', z) == 0 then z = KEYS[3] end
  local v = redis.call('ZPOPMIN', z)
  local dm = v[1]
  local dg = string.match(dm, '^(.*):%d+$')
  redis.call('HDEL', h, 's:' .. dm, 'r:' .. dm, 'o:' .. dm)
  if redis.call('HINCRBY', h, 'k:' .. dg, -1) <= 0 then
    redis.call('HDEL', h, 'k:' .. dg, 'n:' .. dg, 'c:' .. dg, 'f:' .. dg, 'x:' .. dg)
  end
end
expire(ARGV[9])
return {'new', p, false, 1, cs[1], cs[2], cs[3], cs[4], cs[5]}
`)

// finishScript records how a call ended, unless the machine of run.Ledger
// says not to. ARGV: group, position, key, status code, the entry, final,
// tool, TTL in ms, claim, read-only. It answers {written, the answer that
// stands instead or false}. An entry no longer kept, or another call's,
// is not written.
var finishScript = redis.NewScript(ledgerLib + `
local g, tool, to, claim, ro = ARGV[1], ARGV[7], ARGV[4], ARGV[9], ARGV[10] == '1'
local m = g .. ':' .. ARGV[2]
local st = redis.call('HGET', h, 's:' .. m)
if not st or string.sub(st, 3) ~= ARGV[3] then return {0, false} end
local from, fl = string.sub(st, 1, 1), string.sub(st, 2, 2)
if not codes[from] then return corrupt(m) end
local write
if ro then write = true
elseif from == 'd' then write = false
elseif to == 'd' then write = true
elseif to == 'u' then write = from ~= 'u'
else write = from == 'i' and redis.call('HGET', h, 'o:' .. m) == claim end
if not write then
  if from == 'd' and not ro then return {0, redis.call('HGET', h, 'r:' .. m) or false} end
  return {0, false}
end
if fl ~= '*' then
  count(g, tool, b2i(counted(to)) - b2i(counted(from)))
  local df = b2i(failed(to)) - b2i(failed(from))
  if df ~= 0 then redis.call('HINCRBY', h, 'f:' .. g, df) end
end
redis.call('HSET', h, 's:' .. m, to .. fl .. ARGV[3], 'r:' .. m, ARGV[5], 'x:' .. g, ARGV[6])
redis.call('HDEL', h, 'o:' .. m)
if not ro then
  local drop = to == 'f' or to == 'l'
  local src, dst = KEYS[3], KEYS[2]
  if not drop then src, dst = KEYS[2], KEYS[3] end
  local sc = redis.call('ZSCORE', src, m)
  if sc then
    redis.call('ZREM', src, m)
    redis.call('ZADD', dst, sc, m)
  end
end
expire(ARGV[8])
return {1, false}
`)
