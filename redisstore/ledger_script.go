package redisstore

import "github.com/redis/go-redis/v9"

// The ledger's scripts keep a run in three keys: KEYS[1] a hash, KEYS[2]
// and KEYS[3] sorted sets of its entries ("group:position", scored by
// their order), those dropped first (reads, failures, refusals) and the
// others. The hash holds, for each group of calls of one tool with one
// input (a digest): s:G:P the entry's status code, its flag ("*" for a
// fallback's alternative, "-" otherwise) and its key; r:G:P the entry;
// n:G the next position; k:G the entries kept; c:G and f:G the calls and
// failed calls counted; x:G whether the last to end was final; and for the
// run: total, t:TOOL, seq. Status codes: i pending, o open, d answered,
// u unknown, f failed, l refused (see run.Status).
const ledgerLib = `
local h = KEYS[1]
local function num(f) return tonumber(redis.call('HGET', h, f) or '0') end
local function counted(c) return c ~= 'o' and c ~= 'l' end
local function failed(c) return c == 'u' or c == 'f' end
local function b2i(b) if b then return 1 end return 0 end
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

// beginScript records a call's intent or takes over an earlier entry (see
// run.Ledger.Begin). ARGV: group, first position, read-only, alternative,
// the entry, tool, key, max entries, TTL in ms. It answers {code,
// position, the entry taken over or false, new, total, tool, identical,
// identical failed, final}.
var beginScript = redis.NewScript(ledgerLib + `
local g, start, ro, alt, tool = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4] == '1', ARGV[6]
local function takes(c)
  if ro then return c ~= 'l' end
  return c == 'i' or c == 'o' or c == 'd' or c == 'u'
end
local n = num('n:' .. g)
for p = start, n - 1 do
  local m = g .. ':' .. p
  local st = redis.call('HGET', h, 's:' .. m)
  if st and takes(string.sub(st, 1, 1)) then
    local c, a = string.sub(st, 1, 1), string.sub(st, 2, 2) == '*'
    local body = redis.call('HGET', h, 'r:' .. m)
    local res = {c, p, body, 0, 0, 0, 0, 0, 0}
    if c == 'o' then
      local cs = counts(g, tool)
      res = {c, p, body, b2i(not a), cs[1], cs[2], cs[3], cs[4], cs[5]}
      if not a then count(g, tool, 1) end
      redis.call('HSET', h, 's:' .. m, 'i' .. string.sub(st, 2))
    end
    expire(ARGV[9])
    return res
  end
end
local p = math.max(n, start)
local m = g .. ':' .. p
local cs = counts(g, tool)
local fl = '-'
if alt then fl = '*' end
redis.call('HSET', h, 's:' .. m, 'i' .. fl .. ARGV[7], 'r:' .. m, ARGV[5], 'n:' .. g, p + 1)
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
  redis.call('HDEL', h, 's:' .. dm, 'r:' .. dm)
  if redis.call('HINCRBY', h, 'k:' .. dg, -1) <= 0 then
    redis.call('HDEL', h, 'k:' .. dg, 'n:' .. dg, 'c:' .. dg, 'f:' .. dg, 'x:' .. dg)
  end
end
expire(ARGV[9])
return {'new', p, false, b2i(not alt), cs[1], cs[2], cs[3], cs[4], cs[5]}
`)

// finishScript records how a call ended (see run.Ledger.Finish). ARGV:
// group, position, key, status code, the entry, final, tool, TTL in ms.
// An entry no longer kept, or another call's, is not written.
var finishScript = redis.NewScript(ledgerLib + `
local g, tool, to = ARGV[1], ARGV[7], ARGV[4]
local m = g .. ':' .. ARGV[2]
local st = redis.call('HGET', h, 's:' .. m)
if not st or string.sub(st, 3) ~= ARGV[3] then return 0 end
local from, fl = string.sub(st, 1, 1), string.sub(st, 2, 2)
if fl ~= '*' then
  count(g, tool, b2i(counted(to)) - b2i(counted(from)))
  local df = b2i(failed(to)) - b2i(failed(from))
  if df ~= 0 then redis.call('HINCRBY', h, 'f:' .. g, df) end
end
redis.call('HSET', h, 's:' .. m, to .. fl .. ARGV[3], 'r:' .. m, ARGV[5], 'x:' .. g, ARGV[6])
if to == 'f' or to == 'l' then
  local sc = redis.call('ZSCORE', KEYS[3], m)
  if sc then
    redis.call('ZREM', KEYS[3], m)
    redis.call('ZADD', KEYS[2], sc, m)
  end
end
expire(ARGV[8])
return 1
`)
