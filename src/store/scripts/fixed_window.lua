-- Fixed window: hash {w = window index, c = admissions in it}. ARGV: limit, window.
local key = KEYS[1]
local limit, window = tonumber(ARGV[3]), tonumber(ARGV[4])
local idx = idiv(now, window)
local st = redis.call('HMGET', key, 'w', 'c')
local count = 0
if st[1] and tonumber(st[1]) == idx then count = tonumber(st[2]) end
local reset = (idx + 1) * window
if count < limit then
  count = count + 1
  redis.call('HSET', key, 'w', int(idx), 'c', int(count))
  redis.call('PEXPIRE', key, gc_ms)
  return {0, 0, limit - count, reset}
end
return {2, reset - now, 0, reset}
