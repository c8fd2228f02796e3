// The differential driver for Guava's RateLimiter (tests/integration/differential/java.rs).
//
// In Guava's own package so that it can hand each limiter a fake stopwatch through the
// package-private factories `RateLimiter.create(pps, stopwatch)` (SmoothBursty, 1 s of burst)
// and `RateLimiter.create(pps, warmup, MICROSECONDS, 3.0, stopwatch)` (SmoothWarmingUp), the
// ones the public `create` methods call with the system timer.
//
// Input: `config bursty|warmup PPS WARMUP_MICROS TIMEOUT_MICROS|acquire`, then
// `TIME_NS KEY [PERMITS]` per hit (1 permit when absent: `acquire(permits)` or
// `tryAcquire(permits, TIMEOUT_MICROS, MICROSECONDS)`), for as many traces as given. One limiter per key, created at the key's first hit
// (its stopwatch's zero). Output per hit: `A SLEEP_MICROS STORED` or `R STORED`, STORED being
// `storedPermits` after the call as the double's bits in hex.
package com.google.common.util.concurrent;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

public final class RlsimGuavaDriver {
  /** A stopwatch the driver moves: whole microseconds since the limiter's creation. */
  static final class FakeStopwatch extends RateLimiter.SleepingStopwatch {
    final long startNanos;
    long nowNanos;
    long slept;

    FakeStopwatch(long startNanos) {
      this.startNanos = startNanos;
      this.nowNanos = startNanos;
    }

    @Override
    protected long readMicros() {
      return TimeUnit.NANOSECONDS.toMicros(nowNanos - startNanos);
    }

    @Override
    protected void sleepMicrosUninterruptibly(long micros) {
      slept += micros;
    }
  }

  static final class Keyed {
    final RateLimiter limiter;
    final FakeStopwatch stopwatch;

    Keyed(RateLimiter limiter, FakeStopwatch stopwatch) {
      this.limiter = limiter;
      this.stopwatch = stopwatch;
    }
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, "UTF-8"));
    boolean warmup = false;
    double pps = 1.0;
    long warmupMicros = 0;
    long timeoutMicros = 0;
    boolean acquire = false;
    Map<String, Keyed> limiters = new HashMap<>();
    for (String line; (line = in.readLine()) != null; ) {
      String[] f = line.trim().split("\\s+");
      if (f.length == 5 && f[0].equals("config")) {
        warmup = f[1].equals("warmup");
        pps = Double.parseDouble(f[2]);
        warmupMicros = Long.parseLong(f[3]);
        acquire = f[4].equals("acquire");
        timeoutMicros = acquire ? 0 : Long.parseLong(f[4]);
        limiters = new HashMap<>();
        continue;
      }
      if (f.length != 2 && f.length != 3) {
        System.err.println("bad hit line: " + line);
        System.exit(2);
      }
      long nanos = Long.parseLong(f[0]);
      int permits = f.length == 3 ? Integer.parseInt(f[2]) : 1;
      Keyed k = limiters.get(f[1]);
      if (k == null) {
        FakeStopwatch sw = new FakeStopwatch(nanos);
        RateLimiter rl =
            warmup
                ? RateLimiter.create(pps, warmupMicros, TimeUnit.MICROSECONDS, 3.0, sw)
                : RateLimiter.create(pps, sw);
        k = new Keyed(rl, sw);
        limiters.put(f[1], k);
      }
      k.stopwatch.nowNanos = nanos;
      k.stopwatch.slept = 0;
      boolean admitted;
      if (acquire) {
        k.limiter.acquire(permits);
        admitted = true;
      } else {
        admitted = k.limiter.tryAcquire(permits, timeoutMicros, TimeUnit.MICROSECONDS);
      }
      String stored = Long.toHexString(
          Double.doubleToRawLongBits(((SmoothRateLimiter) k.limiter).storedPermits));
      out.write(admitted ? "A " + k.stopwatch.slept + " " + stored : "R " + stored);
      out.newLine();
    }
    out.flush();
  }
}
