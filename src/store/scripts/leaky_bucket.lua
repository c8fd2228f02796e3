-- Leaky bucket (a shaper): a string holding the queue's theoretical arrival time in scaled
-- units (ns x scale). Requests wait while the queue is under `depth`. ARGV: scale, interval, depth.
local key = KEYS[1]
local scale, w, depth = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local n = now * scale
local tat = tonumber(redis.call('GET', key) or int(n))
local ahead = math.max(0, tat - n)
if ahead >= depth then
  return {2, cdiv(ahead - depth + 1, scale), 0, now + cdiv(ahead, scale)}
end
redis.call('SET', key, int(n + ahead + w), 'PX', gc_ms)
local delay = cdiv(ahead, scale)
local code = 0
if delay > 0 then code = 1 end
return {code, delay, idiv(depth, w) - (idiv(ahead, w) + 1), now + cdiv(ahead + w, scale)}
