-- Sliding window log: a sorted set of admission times (score = time). Members must be unique:
-- `time-k`, k = members already at that time (only older ones are ever removed).
-- ARGV: limit, window.
local key = KEYS[1]
local limit, window = tonumber(ARGV[3]), tonumber(ARGV[4])
-- An entry t has expired once t + window <= now.
redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now - window))
local count = redis.call('ZCARD', key)
if count < limit then
  local same = redis.call('ZCOUNT', key, int(now), int(now))
  redis.call('ZADD', key, int(now), int(now) .. '-' .. same)
  redis.call('PEXPIRE', key, gc_ms)
  return {0, 0, limit - count - 1, now + window}
end
local oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
local newest = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
return {2, oldest + window - now, 0, newest + window}
