-- Token bucket in integer units: hash {l = level, t = last refill}. A token is `token` units,
-- the bucket gains `refill` units per ns up to `capacity` (from limit, window, burst divided by
-- their gcd); a request of cost c takes c tokens. ARGV: refill, token, capacity; cost.
local key = KEYS[1]
local refill, token, capacity = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local cost = tonumber(ARGV[6])
local st = redis.call('HMGET', key, 'l', 't')
local level = capacity
if st[1] then
  -- Clamped: a sum past 2^53 rounds, but stays above the capacity it is clamped to.
  level = math.min(capacity, tonumber(st[1]) + refill * (now - tonumber(st[2])))
end
local code, amount = 0, 0
-- The bucket holds capacity / token = burst tokens: a costlier request is never admitted.
if cost > idiv(capacity, token) then
  code, amount = 2, math.max(1, cdiv(capacity - level, refill))
else
  local need = cost * token
  if level >= need then
    level = level - need
  else
    code, amount = 2, cdiv(need - level, refill)
  end
end
redis.call('HSET', key, 'l', int(level), 't', int(now))
redis.call('PEXPIRE', key, gc_ms)
return {code, amount, idiv(level, token), now + cdiv(capacity - level, refill)}
