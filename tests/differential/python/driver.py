"""Drives Python `limits` (MemoryStorage) over traces under a patched clock, for rlsim's
differential tests (tests/integration/differential/python.rs). Our own code; `limits` itself
comes from PyPI (.ci/run).

stdin: traces one after the other, each a JSON line {"strategy": ..., "limit": "N/unit"} (and
optionally "epoch_ns", the instant virtual time 0 stands for) then one line per hit,
"TIME_NS KEY" or "TIME_NS KEY COST" (virtual nanoseconds, never decreasing; COST, default 1,
is passed as `hit(item, key, cost=COST)`). Each trace gets a fresh storage. stdout, per hit: "A|R REMAINING RESET" from `get_window_stats` right after the hit
(RESET as repr of the float).

`time.time()` reads float(epoch_ns + t) / 1e9 (epoch_ns defaults to EPOCH_NS, 2026-01-01), as
CPython converts its nanosecond clock. The storage's background expiry timer is replaced by one
that never fires, so that decisions do not depend on wall-clock thread scheduling.
"""
import json
import sys
import threading
import time

EPOCH_NS = 1_767_225_600 * 1_000_000_000
NOW = [0.0]
time.time = lambda: NOW[0]


class _NoTimer:
    def __init__(self, *args, **kwargs):
        pass

    def start(self):
        pass

    def cancel(self):
        pass

    def is_alive(self):
        return True


threading.Timer = _NoTimer

import limits  # noqa: E402  (after the patches: the storage reads them at call time)
from limits.storage import MemoryStorage  # noqa: E402
from limits.strategies import STRATEGIES  # noqa: E402


def main():
    out = []
    limiter = item = None
    epoch_ns = EPOCH_NS
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            cfg = json.loads(line)
            limiter = STRATEGIES[cfg["strategy"]](MemoryStorage())
            item = limits.parse(cfg["limit"])
            epoch_ns = int(cfg.get("epoch_ns", EPOCH_NS))
            continue
        t, key, *cost = line.split(" ")
        NOW[0] = float(epoch_ns + int(t)) / 1e9
        ok = limiter.hit(item, key, cost=int(cost[0]) if cost else 1)
        stats = limiter.get_window_stats(item, key)
        out.append(f"{'A' if ok else 'R'} {stats.remaining} {stats.reset_time!r}")
    sys.stdout.write("\n".join(out) + "\n")


main()
