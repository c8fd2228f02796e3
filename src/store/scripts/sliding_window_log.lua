-- Sliding window log: a sorted set of admission times (score = time), one member per unit of
-- cost. Members must be unique: `time-k`, k = members already at that time (only older ones
-- are ever removed). ARGV: limit, window; cost.
local key = KEYS[1]
local limit, window = tonumber(ARGV[3]), tonumber(ARGV[4])
local cost = tonumber(ARGV[6])
-- An entry t has expired once t + window <= now.
redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now - window))
local count = redis.call('ZCARD', key)
local function newest()
  local n = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if n[2] then return tonumber(n[2]) + window end
  return now
end
if cost > limit then
  return {2, math.max(1, newest() - now), limit - count, newest()}
end
if count + cost <= limit then
  local same = redis.call('ZCOUNT', key, int(now), int(now))
  for k = 0, cost - 1 do
    redis.call('ZADD', key, int(now), int(now) .. '-' .. int(same + k))
  end
  redis.call('PEXPIRE', key, gc_ms)
  return {0, 0, limit - count - cost, now + window}
end
-- Room once the oldest count + cost - limit entries have left.
local i = count + cost - limit - 1
local leaving = tonumber(redis.call('ZRANGE', key, i, i, 'WITHSCORES')[2])
return {2, leaving + window - now, limit - count, newest()}
