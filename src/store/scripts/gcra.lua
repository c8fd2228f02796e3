-- GCRA: a string holding the theoretical arrival time. A request of cost c is c cells at once
-- (governor's check_n): the cells after the first weigh (c - 1) x interval, which the
-- tolerance must cover. ARGV: interval, tolerance; cost.
local key = KEYS[1]
local interval, tolerance = tonumber(ARGV[3]), tonumber(ARGV[4])
local cost = tonumber(ARGV[6])
local tat = tonumber(redis.call('GET', key) or int(now))
local function remaining(t)
  local slack = tolerance - math.max(0, t - now)
  if slack >= 0 then return idiv(slack, interval) + 1 end
  return 0
end
local extra = (cost - 1) * interval
if extra > tolerance then
  return {2, math.max(1, tat - now), remaining(tat), math.max(tat, now)}
end
local earliest = math.max(0, tat + extra - tolerance)
if now < earliest then
  local left = 0
  if cost > 1 then left = remaining(tat) end
  return {2, earliest - now, left, tat}
end
tat = math.max(tat, now) + interval + extra
redis.call('SET', key, int(tat), 'PX', gc_ms)
return {0, 0, remaining(tat), tat}
