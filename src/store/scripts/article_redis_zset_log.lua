-- The article “Rate Limiting em Produção”'s DistributedSlidingWindowRateLimiter, its MULTI as written:
--   zRemRangeByScore(key, 0, windowStart); zCard(key); zAdd(key, {score: now, value: now});
--   expire(key, ceil(windowMs / 1000))  -- Redis's clock: replaced by the run's GC TTL.
-- ARGV[1] here is the virtual `Date.now()` in ms. ARGV: maxRequests, windowMs.
local key = KEYS[1]
local now_ms = tonumber(ARGV[1])
local max_requests, window_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local window_start = now_ms - window_ms
redis.call('ZREMRANGEBYSCORE', key, 0, int(window_start))
local count = redis.call('ZCARD', key)
redis.call('ZADD', key, int(now_ms), int(now_ms))
redis.call('PEXPIRE', key, gc_ms)
-- The article returns `count < maxRequests`. Read-only, for rlsim's headers: the members now,
-- the newest one, and the one that must leave before a request passes again.
local n = redis.call('ZCARD', key)
local newest = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
local blocking = -1
if count >= max_requests then
  blocking = tonumber(redis.call('ZRANGE', key, n - max_requests, n - max_requests, 'WITHSCORES')[2])
end
return {count, n, newest, blocking}
