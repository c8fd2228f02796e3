// Drives a real rate-limiting library over a trace, under a fake clock, for rlsim's differential
// tests (tests/integration/differential.rs). Our own code; the libraries come from npm (.ci/run).
//
// stdin: traces one after the other, each a JSON line {"profile": NAME, ...the library's
// options} then one line per hit, "TIME_MS KEY" or "TIME_MS KEY COST" (a weight above 1, which
// only rate-limiter-flexible takes: consume(key, COST); a negative COST is reward(key, -COST)),
// times never decreasing. Each trace runs
// on a fresh limiter and a fresh fake clock. stdout: one line per hit,
// "A|R REMAINING INSTANT_MS SECONDS", "-" where the library exposes no such value:
//   express-rate-limit:    RateLimit-Remaining header, the client's resetTime, then Retry-After
//                          (refused) or RateLimit-Reset (admitted) header.
//   nestjs-throttler:      max(0, limit - totalHits) (admitted only), the block's or the oldest
//                          hit's expiry (refused only), Retry-After (timeToBlockExpire, refused).
//   rate-limiter-flexible: remainingPoints, now + msBeforeNext, -.
'use strict';
const FakeTimers = require('@sinonjs/fake-timers');
const readline = require('node:readline');

// Each trace gets a fresh clock starting at 0 and a fresh limiter.
let clock = null;
function freshClock() {
  if (clock) clock.uninstall();
  clock = FakeTimers.install({
    now: 0,
    toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
  });
}

function expressLimiter(cfg) {
  const { rateLimit } = require('express-rate-limit');
  const limiter = rateLimit({
    windowMs: cfg.windowMs,
    limit: cfg.limit,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    keyGenerator: (req) => req.key,
    validate: false,
  });
  return (key) =>
    new Promise((resolve, reject) => {
      const headers = {};
      const req = { key, ip: '192.0.2.1', headers: {}, app: { get: () => false } };
      const res = {
        statusCode: 200,
        headersSent: false,
        writableEnded: false,
        setHeader(k, v) { headers[k.toLowerCase()] = String(v); },
        getHeader(k) { return headers[k.toLowerCase()]; },
        status(c) { this.statusCode = c; return this; },
        send() { this.writableEnded = true; finish(false); },
        once() {},
        on() {},
      };
      const finish = (admitted) => {
        const info = req.rateLimit;
        const seconds = admitted ? headers['ratelimit-reset'] : headers['retry-after'];
        resolve(`${admitted ? 'A' : 'R'} ${headers['ratelimit-remaining']} ${info.resetTime.getTime()} ${seconds}`);
      };
      limiter(req, res, (err) => (err ? reject(err) : finish(true)));
    });
}

function nestjsLimiter(cfg) {
  const { ThrottlerStorageService } = require('@nestjs/throttler');
  const storage = new ThrottlerStorageService();
  return async (key) => {
    const r = await storage.increment(key, cfg.ttl, cfg.limit, cfg.blockDuration, 'default');
    if (!r.isBlocked) {
      return `A ${Math.max(0, cfg.limit - r.totalHits)} - -`;
    }
    const record = storage.storage.get(key);
    const until = cfg.blockDuration > 0
      ? record.blockExpiresAt
      : Math.min(...storage.hitExpirations.get(key).get('default'));
    return `R - ${until} ${r.timeToBlockExpire}`;
  };
}

function flexibleLimiter(cfg) {
  const { RateLimiterMemory } = require('rate-limiter-flexible');
  const limiter = new RateLimiterMemory({
    points: cfg.points,
    duration: cfg.duration,
    blockDuration: cfg.blockDuration,
  });
  const consume = async (key, cost) => {
    try {
      const res = await limiter.consume(key, cost);
      return `A ${res.remainingPoints} ${Date.now() + res.msBeforeNext} -`;
    } catch (res) {
      if (res instanceof Error) throw res;
      return `R ${res.remainingPoints} ${Date.now() + res.msBeforeNext} -`;
    }
  };
  // A line "TIME KEY -POINTS": reward(key, POINTS), then what the record says (over `points`
  // or not, its remainingPoints and expiry).
  consume.reward = async (key, points) => {
    const res = await limiter.reward(key, points);
    const over = res.consumedPoints > cfg.points;
    return `${over ? 'R' : 'A'} ${res.remainingPoints} ${Date.now() + res.msBeforeNext} -`;
  };
  return consume;
}

// The article “Rate Limiting em Produção”'s TokenBucketRateLimiter, as printed (one instance per
// key, created on the key's first request), and the article “Limitação de taxa de API”'s sliding
// counter with an in-memory map in place
// of Redis `MGET`/`INCR` (the expiries it sets never fire before the counter is unused).
class TokenBucketRateLimiter {
  constructor(capacity, refillRate) {
    this.capacity = capacity;
    this.refillRate = refillRate;
    this.tokens = capacity;
    this.lastRefill = Date.now();
  }

  tryRequest() {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  refill() {
    const now = Date.now();
    const elapsed = (now - this.lastRefill) / 1000;
    const tokensToAdd = elapsed * this.refillRate;
    this.tokens = Math.min(this.capacity, this.tokens + tokensToAdd);
    this.lastRefill = now;
  }
}

function articleTokenBucket(cfg) {
  const limiters = new Map();
  return async (key) => {
    if (!limiters.has(key)) limiters.set(key, new TokenBucketRateLimiter(cfg.capacity, cfg.refillRate));
    return `${limiters.get(key).tryRequest() ? 'A' : 'R'} - - -`;
  };
}

function articleSlidingCounter(cfg) {
  const redis = new Map();
  return async (userId) => {
    const now = Date.now();
    const currentWindow = Math.floor(now / cfg.windowMs);
    const previousWindow = currentWindow - 1;
    const windowProgress = (now % cfg.windowMs) / cfg.windowMs;
    const current = redis.get(`rl:${userId}:${currentWindow}`);
    const previous = redis.get(`rl:${userId}:${previousWindow}`);
    const estimated = (parseInt(previous ?? '0') * (1 - windowProgress)) + parseInt(current ?? '0');
    if (estimated >= cfg.limit) return 'R - - -';
    redis.set(`rl:${userId}:${currentWindow}`, String(parseInt(current ?? '0') + 1));
    return 'A - - -';
  };
}

const LIMITERS = {
  'article-float-token-bucket': articleTokenBucket,
  'article-sliding-counter': articleSlidingCounter,
  'express-rate-limit': expressLimiter,
  'nestjs-throttler': nestjsLimiter,
  'rate-limiter-flexible': flexibleLimiter,
};

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let hit = null;
  let cfg = null;
  const out = [];
  for await (const line of lines) {
    if (line.startsWith('{')) {
      freshClock();
      cfg = JSON.parse(line);
      const make = LIMITERS[cfg.profile];
      if (!make) throw new Error(`unknown profile ${cfg.profile}`);
      hit = make(cfg);
      continue;
    }
    if (line === '') continue;
    const [t, key, c] = line.split(' ');
    const at = Number(t);
    const cost = c === undefined ? 1 : Number(c);
    if (cost !== 1 && cfg.profile !== 'rate-limiter-flexible') {
      throw new Error(`${cfg.profile} takes no cost`);
    }
    // Advancing fires the library's own timers (sweeps, expiries) on the way.
    if (at > clock.now) clock.tick(at - clock.now);
    out.push(await (cost < 0 ? hit.reward(key, -cost) : hit(key, cost)));
  }
  process.stdout.write(out.join('\n') + '\n');
}

main().catch((e) => {
  process.stderr.write(`driver: ${e.stack || e}\n`);
  process.exit(1);
});
