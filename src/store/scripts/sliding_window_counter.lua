-- Sliding window counter: hash {w = window index, c = current count, p = previous count}; the
-- previous window weighs (window - elapsed) / window, compared in integers. A request of cost
-- c is a unit request on top of c - 1 more admissions. ARGV: limit, window; cost.
local key = KEYS[1]
local l, w = tonumber(ARGV[3]), tonumber(ARGV[4])
local cost = tonumber(ARGV[6])
local i = idiv(now, w)
local st = redis.call('HMGET', key, 'w', 'c', 'p')
local curr, prev = 0, 0
if st[1] then
  local gap = i - tonumber(st[1])
  if gap == 0 then curr, prev = tonumber(st[2]), tonumber(st[3])
  elseif gap == 1 then curr, prev = 0, tonumber(st[2]) end
end
local e = now - i * w
local weight = prev * (w - e)
local room = cdiv(math.max(0, l * w - weight), w)
local function reset_at()
  if curr > 0 then return (i + 2) * w elseif prev > 0 then return (i + 1) * w end
  return now
end
if cost > l then
  return {2, math.max(1, reset_at() - now), math.max(0, room - curr), reset_at()}
end
local code, amount = 0, 0
local c1 = curr + cost - 1
if c1 < l and weight < (l - c1) * w then
  curr = curr + cost
  redis.call('HSET', key, 'w', int(i), 'c', int(curr), 'p', int(prev))
  redis.call('PEXPIRE', key, gc_ms)
else
  code = 2
  -- The earliest elapsed time e2 (this window, else the next) at which it passes.
  local done = false
  if c1 < l and prev > 0 then
    local e2 = math.max(0, w + 1 - cdiv((l - c1) * w, prev))
    if e2 < w then amount, done = e2 - e, true end
  end
  if not done then
    local e2 = 0
    if curr > 0 then e2 = math.max(0, w + 1 - cdiv((l - cost + 1) * w, curr)) end
    amount = w - e + e2
  end
end
return {code, amount, math.max(0, room - curr), reset_at()}
