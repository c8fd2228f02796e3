-- Fixed window: hash {w = window index, c = units admitted in it}. ARGV: limit, window; cost.
local key = KEYS[1]
local limit, window = tonumber(ARGV[3]), tonumber(ARGV[4])
local cost = tonumber(ARGV[6])
local idx = idiv(now, window)
local st = redis.call('HMGET', key, 'w', 'c')
local count = 0
if st[1] and tonumber(st[1]) == idx then count = tonumber(st[2]) end
local reset = (idx + 1) * window
if cost > limit then
  -- Never admitted: the wait until the key is fresh.
  local fresh = reset
  if count == 0 then fresh = now end
  return {2, math.max(1, fresh - now), limit - count, fresh}
end
if count + cost <= limit then
  count = count + cost
  redis.call('HSET', key, 'w', int(idx), 'c', int(count))
  redis.call('PEXPIRE', key, gc_ms)
  return {0, 0, limit - count, reset}
end
return {2, reset - now, limit - count, reset}
