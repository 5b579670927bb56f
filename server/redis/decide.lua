-- limit.Decide (server/limit/arithmetic.go) for one request, run by Redis as
-- one step: every bucket is refilled, checked and, if all of them hold a
-- request, charged; nothing else runs in between, on any gateway.
--
-- KEYS[i]          bucket i: a hash of b and m (balances in Units) and t
--                  (µs); no key is a full bucket.
-- ARGV[1]          now in µs, or "" to read Redis's clock.
-- ARGV[2]          ms added to every key's expiry (Config.ExpirySlack).
-- ARGV[3i .. 3i+2] bucket i's Burst, BurstRefillPerMinute, PerMinute.
--
-- Returns {admitted (1 or 0), retry after (µs), then b, m, t of each bucket}.
--
-- Lua's numbers are doubles. Every value here is an integer below 2^53
-- (limit.MaxRuleValue sees to it), where doubles add, subtract and multiply
-- exactly; only division rounds, and ceildiv checks its quotient with an
-- exact product. The functions are Decide's, line for line.

local UNIT = 60000000

-- ceil(n / d) for n >= 0, d > 0.
local function ceildiv(n, d)
  local q = math.floor(n / d)
  if q * d < n then
    q = q + 1
  end
  return q
end

local function fill(balance, capacity, rate, elapsed)
  if balance >= capacity or elapsed >= ceildiv(capacity - balance, rate) then
    return capacity
  end
  return balance + elapsed * rate
end

local function waitfor(balance, rate)
  if balance >= UNIT then
    return 0
  end
  return ceildiv(UNIT - balance, rate)
end

local now
if ARGV[1] == '' then
  -- Redis before 5 refuses a write after TIME unless the script's effects,
  -- rather than the script, are replicated.
  if redis.replicate_commands then
    redis.replicate_commands()
  end
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
else
  now = tonumber(ARGV[1])
end
local slack = tonumber(ARGV[2])

local n = #KEYS
local bcap, mcap, brate, mrate = {}, {}, {}, {}
local b, m, t = {}, {}, {}
local admitted = true
for i = 1, n do
  bcap[i] = tonumber(ARGV[3 * i]) * UNIT
  brate[i] = tonumber(ARGV[3 * i + 1])
  mrate[i] = tonumber(ARGV[3 * i + 2])
  mcap[i] = mrate[i] * UNIT
  local stored = redis.call('HMGET', KEYS[i], 'b', 'm', 't')
  local sb, sm, st = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
  if not (sb and sm and st) then
    sb, sm, st = bcap[i], mcap[i], now
  end
  -- Refill. A clock behind the stored time refills nothing and leaves t.
  local elapsed = math.max(now - st, 0)
  b[i] = fill(sb, bcap[i], brate[i], elapsed)
  m[i] = fill(sm, mcap[i], mrate[i], elapsed)
  t[i] = math.max(st, now)
  if b[i] < UNIT or m[i] < UNIT then
    admitted = false
  end
end

-- All or none. A refusal writes nothing: the refilled states equal the
-- stored ones in value.
if admitted then
  for i = 1, n do
    b[i] = b[i] - UNIT
    m[i] = m[i] - UNIT
    -- The key lives until the bucket is full again (State.FullAt), when
    -- it is the same as no key: memory is bounded without a sweeper.
    local fullat = t[i] + math.max(
      ceildiv(math.max(bcap[i] - b[i], 0), brate[i]),
      ceildiv(math.max(mcap[i] - m[i], 0), mrate[i]))
    redis.call('HSET', KEYS[i],
      'b', string.format('%.0f', b[i]),
      'm', string.format('%.0f', m[i]),
      't', string.format('%.0f', t[i]))
    redis.call('PEXPIRE', KEYS[i], math.max(ceildiv(fullat - now, 1000), 1) + slack)
  end
end

local reply = {admitted and 1 or 0, 0}
local retry = 0
for i = 1, n do
  -- t is past now only when the clock went backwards; the bucket counts
  -- from t, so the wait is longer by the difference.
  local wait = t[i] - now + math.max(waitfor(b[i], brate[i]), waitfor(m[i], mrate[i]))
  retry = math.max(retry, wait)
  reply[3 * i] = b[i]
  reply[3 * i + 1] = m[i]
  reply[3 * i + 2] = t[i]
end
reply[2] = retry
return reply
