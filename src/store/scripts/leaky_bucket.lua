-- Leaky bucket (a shaper): a string holding the queue's theoretical arrival time in scaled
-- units (ns x scale). A request of cost c takes c places and c intervals; it fits while
-- ahead < depth + interval - c x interval. ARGV: scale, interval, depth; cost.
local key = KEYS[1]
local scale, w, depth = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local cost = tonumber(ARGV[6])
local n = now * scale
local tat = tonumber(redis.call('GET', key) or int(n))
local ahead = math.max(0, tat - n)
local places = math.max(0, idiv(depth, w) - idiv(ahead, w))
local units = cost * w
if units > depth + w then
  return {2, math.max(1, cdiv(ahead, scale)), places, now + cdiv(ahead, scale)}
end
local room = depth + w - units
if ahead >= room then
  return {2, cdiv(ahead - room + 1, scale), places, now + cdiv(ahead, scale)}
end
redis.call('SET', key, int(n + ahead + units), 'PX', gc_ms)
local delay = cdiv(ahead, scale)
local code = 0
if delay > 0 then code = 1 end
return {code, delay, idiv(depth, w) - (idiv(ahead, w) + cost), now + cdiv(ahead + units, scale)}
