-- GCRA: a string holding the theoretical arrival time. ARGV: interval, tolerance.
local key = KEYS[1]
local interval, tolerance = tonumber(ARGV[3]), tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', key) or int(now))
local earliest = math.max(0, tat - tolerance)
if now < earliest then
  return {2, earliest - now, 0, tat}
end
tat = math.max(tat, now) + interval
redis.call('SET', key, int(tat), 'PX', gc_ms)
local slack = now + tolerance - tat
local remaining = 0
if slack >= 0 then remaining = idiv(slack, interval) + 1 end
return {0, 0, remaining, tat}
