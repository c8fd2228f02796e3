-- rlsim prelude (shared by the algorithm scripts). Virtual time comes in ARGV[1] as integer
-- nanoseconds; Lua 5.1 numbers are doubles, exact for integers below 2^53, and rlsim refuses
-- any call whose values could pass that (see src/store/scripts.rs). ARGV[2] is a wall-clock
-- TTL in ms that only garbage-collects the keys of a run that died: decisions never read it.
-- ARGV[3..5] configure the algorithm; ARGV[6] is the request's cost (1 for a plain request).
local now = tonumber(ARGV[1])
local gc_ms = ARGV[2]
-- floor(a / b) for 0 <= a and 0 < b, corrected for the rounding of a / b.
local function idiv(a, b)
  local q = math.floor(a / b)
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end
local function cdiv(a, b)
  local q = idiv(a, b)
  if q * b < a then q = q + 1 end
  return q
end
-- An integer as a decimal string (`tostring` would print 14 significant digits only).
local function int(x) return string.format('%.0f', x) end
-- Decision codes: 0 allow, 1 delay(amount), 2 reject(retry_after = amount).
