//! express-rate-limit, @nestjs/throttler and rate-limiter-flexible from npm, driven by
//! tests/differential/node/driver.js under @sinonjs/fake-timers.

use super::*;
use rlsim::algorithms::profiles::ParamValue::{Int, Str};

/// The Node driver, if node and the pinned packages are installed.
fn node() -> Option<Command> {
    let dir = driver_dir("node");
    if !require_external(on_path("node"), "node", "apt-get install nodejs npm") {
        return None;
    }
    let installed = [
        "express-rate-limit",
        "@nestjs/throttler",
        "rate-limiter-flexible",
        "@sinonjs/fake-timers",
    ]
    .iter()
    .all(|p| dir.join("node_modules").join(p).is_dir());
    if !require_external(
        installed,
        "the npm packages of tests/differential/node",
        "cd tests/differential/node && npm ci",
    ) {
        return None;
    }
    let mut cmd = Command::new("node");
    cmd.arg(dir.join("driver.js"));
    Some(cmd)
}

/// Keys per trace: from one (every hit on the same key) to 25.
fn keys(seed: u64) -> u32 {
    1 + (seed % 5) as u32 * 6
}

#[test]
fn express_rate_limit_agrees_with_the_npm_package() {
    let Some(driver) = node() else { return };
    let cases: Vec<Case> = (0..TRACES)
        .map(|seed| {
            let limit = 1 + seed % 7;
            let window_ms = [1000, 1500, 60_000, 250][seed as usize % 4];
            Case {
                config: format!(
                    r#"{{"profile":"express-rate-limit","windowMs":{window_ms},"limit":{limit}}}"#
                ),
                given: vec![
                    ("windowMs", Int(window_ms as i64)),
                    ("limit", Int(limit as i64)),
                ],
                hits: trace(seed, window_ms, keys(seed), HITS),
            }
        })
        .collect();
    let total = differential(driver, ProfileKind::ExpressRateLimit, &cases, |h, d| {
        let now_ms = h.at / NANOS_PER_MILLI;
        let reset_ms = d.reset_at / NANOS_PER_MILLI;
        let admitted = d.outcome.is_admitted();
        if !admitted {
            assert_eq!(retry_instant_ms(h, d), Some(reset_ms));
        }
        Said {
            admitted,
            remaining: Some(d.remaining),
            instant_ms: Some(reset_ms),
            // Retry-After when refused, RateLimit-Reset when admitted: the same formula.
            seconds: Some(ceil_seconds(reset_ms.saturating_sub(now_ms))),
        }
    });
    assert_eq!(total, TRACES as usize * HITS);
}

#[test]
fn nestjs_throttler_agrees_with_the_npm_package() {
    let Some(driver) = node() else { return };
    let cases: Vec<Case> = (0..TRACES)
        .map(|seed| {
            let limit = 1 + seed % 6;
            let ttl = [1000, 2000, 60_000, 300][seed as usize % 4];
            // The guard's default (block = ttl), no block (a sliding log), shorter, longer.
            let block = [ttl, 0, ttl / 2, ttl * 3][(seed / 4) as usize % 4];
            Case {
                config: format!(
                    r#"{{"profile":"nestjs-throttler","ttl":{ttl},"limit":{limit},"blockDuration":{block}}}"#
                ),
                given: vec![
                    ("ttl", Int(ttl as i64)),
                    ("limit", Int(limit as i64)),
                    ("blockDuration", Int(block as i64)),
                ],
                hits: trace(seed + 1000, ttl, keys(seed), HITS),
            }
        })
        .collect();
    let total = differential(driver, ProfileKind::NestjsThrottler, &cases, |h, d| {
        let now_ms = h.at / NANOS_PER_MILLI;
        match retry_instant_ms(h, d) {
            None => Said {
                admitted: true,
                remaining: Some(d.remaining),
                instant_ms: None,
                seconds: None,
            },
            Some(until) => Said {
                admitted: false,
                remaining: None,
                instant_ms: Some(until),
                seconds: Some(ceil_seconds(until - now_ms)),
            },
        }
    });
    assert_eq!(total, TRACES as usize * HITS);
}

#[test]
fn rate_limiter_flexible_agrees_with_the_npm_package() {
    let Some(driver) = node() else { return };
    // Each configuration three times: one point per `consume`, then random costs up to
    // points + 2 (`consume(key, cost)`, above `points` included), then costs and rewards
    // (`reward(key, points)`, of live, expired and missing records).
    let cases: Vec<Case> = (0..3 * TRACES)
        .map(|n| {
            let (seed, costly, rewarded) = (n % TRACES, n >= TRACES, n >= 2 * TRACES);
            let points = 1 + seed % 6;
            let duration = [1, 2, 60, 5][seed as usize % 4];
            let block = [0, 1, 3, 120][(seed / 4) as usize % 4];
            Case {
                config: format!(
                    r#"{{"profile":"rate-limiter-flexible","points":{points},"duration":{duration},"blockDuration":{block}}}"#
                ),
                given: vec![
                    ("points", Int(points as i64)),
                    ("duration", Str(format!("{duration}s"))),
                    ("blockDuration", Int(block as i64)),
                ],
                hits: match trace(seed + 2000, duration * 1000, keys(seed), HITS) {
                    hits if rewarded => with_refunds(
                        with_costs(hits, seed, points as Cost + 2),
                        seed,
                        points as Cost + 2,
                    ),
                    hits if costly => with_costs(hits, seed, points as Cost + 2),
                    hits => hits,
                },
            }
        })
        .collect();
    let total = differential(driver, ProfileKind::RateLimiterFlexible, &cases, |h, d| {
        Said {
            admitted: d.outcome.is_admitted(),
            remaining: Some(d.remaining),
            instant_ms: Some(retry_instant_ms(h, d).unwrap_or(d.reset_at / NANOS_PER_MILLI)),
            seconds: None,
        }
    });
    assert_eq!(total, 3 * TRACES as usize * HITS);
}

#[test]
fn rate_limiter_flexible_takes_fractional_seconds_as_the_npm_package() {
    // `duration` and `blockDuration` as JavaScript numbers with a fraction (whole milliseconds
    // once multiplied by 1000, so that the library's reported instants are whole too).
    let Some(driver) = node() else { return };
    use rlsim::algorithms::profiles::ParamValue::Float;
    let cases: Vec<Case> = (0..12u64)
        .map(|seed| {
            let points = 1 + seed % 5;
            let duration = [0.25, 1.5, 2.5, 0.75][seed as usize % 4];
            let block = [0.0, 0.5, 1.25][(seed / 4) as usize % 3];
            Case {
                config: format!(
                    r#"{{"profile":"rate-limiter-flexible","points":{points},"duration":{duration},"blockDuration":{block}}}"#
                ),
                given: vec![
                    ("points", Int(points as i64)),
                    ("duration", Float(duration)),
                    if block == 0.0 {
                        ("blockDuration", Int(0))
                    } else {
                        ("blockDuration", Float(block))
                    },
                ],
                hits: trace(seed + 2500, (duration * 1000.0) as u64, keys(seed), HITS),
            }
        })
        .collect();
    let total = differential(driver, ProfileKind::RateLimiterFlexible, &cases, |h, d| {
        Said {
            admitted: d.outcome.is_admitted(),
            remaining: Some(d.remaining),
            instant_ms: Some(retry_instant_ms(h, d).unwrap_or(d.reset_at / NANOS_PER_MILLI)),
            seconds: None,
        }
    });
    assert_eq!(total, 12 * HITS);
}

/// The two articles' JavaScript as printed (tests/differential/node/driver.js transcribes it).
fn decisions_only(_: &Hit, d: &Decision) -> Said {
    Said {
        admitted: d.outcome.is_admitted(),
        remaining: None,
        instant_ms: None,
        seconds: None,
    }
}

#[test]
fn article_float_token_bucket_agrees_with_the_articles_code() {
    let Some(driver) = node() else { return };
    let cases: Vec<Case> = (0..TRACES)
        .map(|seed| {
            let capacity = 1 + seed % 7;
            // Rates a reader would write: 100/min as 100 / 60, 10/s, 2.5/s, 1/s.
            let rate = [100.0 / 60.0, 10.0, 2.5, 1.0][seed as usize % 4];
            let window_ms = (capacity as f64 / rate * 1000.0) as u64 + 1;
            Case {
                config: format!(
                    r#"{{"profile":"article-float-token-bucket","capacity":{capacity},"refillRate":{rate:?}}}"#
                ),
                given: vec![
                    ("capacity", Int(capacity as i64)),
                    ("refillRate", rlsim::algorithms::profiles::ParamValue::Float(rate)),
                ],
                hits: trace(seed + 4000, window_ms, keys(seed), HITS),
            }
        })
        .collect();
    differential(
        driver,
        ProfileKind::ArticleTokenBucket,
        &cases,
        decisions_only,
    );
}

#[test]
fn article_sliding_counter_agrees_with_the_articles_code() {
    let Some(driver) = node() else { return };
    let cases: Vec<Case> = (0..TRACES)
        .map(|seed| {
            let limit = 1 + seed % 7;
            let window_ms = [60_000, 1000, 1500, 250][seed as usize % 4];
            Case {
                config: format!(
                    r#"{{"profile":"article-sliding-counter","limit":{limit},"windowMs":{window_ms}}}"#
                ),
                given: vec![
                    ("limit", Int(limit as i64)),
                    ("windowMs", Int(window_ms as i64)),
                ],
                hits: trace(seed + 5000, window_ms, keys(seed), HITS),
            }
        })
        .collect();
    differential(
        driver,
        ProfileKind::ArticleSlidingCounter,
        &cases,
        decisions_only,
    );
}
