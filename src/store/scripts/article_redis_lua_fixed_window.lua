-- The article “Limitação de taxa de API”'s rateLimitCheck, as written, with its PEXPIRE kept on the virtual clock:
-- KEYS[2] holds the key's virtual expire time (ms), and a key past it is deleted first, as
-- Redis deletes a key once its clock is past the expire time (`now > when`).
-- ARGV[1] here is the virtual time in ms. ARGV: limit, ttlMs.
local now_ms = tonumber(ARGV[1])
local expire_at = redis.call('GET', KEYS[2])
if expire_at and now_ms > tonumber(expire_at) then
  redis.call('DEL', KEYS[1], KEYS[2])
end
-- The article's script from here (PEXPIRE and PTTL on the virtual clock).
local key   = KEYS[1]
local limit = tonumber(ARGV[3])
local ttlMs = tonumber(ARGV[4])
local count = redis.call('INCR', key)
if count == 1 then
  redis.call('SET', KEYS[2], int(now_ms + ttlMs))      -- PEXPIRE key ttlMs
end
redis.call('PEXPIRE', key, gc_ms)
redis.call('PEXPIRE', KEYS[2], gc_ms)
local at = tonumber(redis.call('GET', KEYS[2]))
if count > limit then
  return {0, at - now_ms, count, at}                  -- {0, PTTL key}
end
return {1, -1, count, at}
