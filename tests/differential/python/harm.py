"""Per-client harm recomputed from a decision log, independently of rlsim's recorder.

Usage: harm.py SCENARIO.toml DECISIONS.csv SUMMARY.json

Reads the scenario's intent (or its policy's limit, window and burst), each source's role and
each user's tier, then for every contender recomputes from the log's rows alone (time, key,
outcome, delay, client, source) what docs/metrics.md defines per real client:
policy_violations, needless_rejections, wrongly_allowed, wrongly_rejected, clients_hurt, and
per source the violations, needless and collateral rejections and clients hurt; collateral
rejections and clients wherever the log's key is the key that decided (the short form, or a
contender whose rules all key like the policy). Prints one line per contender and exits 1 on
the end if any figure differs from summary.json.
"""

import bisect
import csv
import json
import sys
import tomllib
from collections import defaultdict

UNITS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "min": 60 * 10**9,
         "h": 3600 * 10**9, "d": 86400 * 10**9}


def duration(text):
    num = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(float(num) * UNITS[text[len(num):]])


def tier_of(tiers, j, clients):
    """population::tier_of: tiers take consecutive shares of the clients by weight."""
    total = sum(w for _, w in tiers)
    position = (j * total) // max(clients, 1)
    acc = 0
    for name, w in tiers:
        acc += w
        if position < acc:
            return name
    return None


def entitlements(scenario):
    """(base bound, {tier: bound}) where a bound is (ceiling, window)."""
    policy = scenario["policy"]
    intent = scenario.get("intent", {})
    limit = intent.get("limit", policy["limit"])
    window = duration(intent.get("window", policy["window"]))
    if "burst" in intent:
        burst = intent["burst"]
    elif "limit" in intent:
        burst = limit
    else:
        burst = policy.get("burst", policy["limit"])
    tiers = {}
    for t in intent.get("per_tier", []):
        w = duration(t["window"]) if "window" in t else window
        ceiling = max(t["limit"], t.get("burst", t["limit"]))
        for name in t["tiers"]:
            tiers[name] = (ceiling, w)
    return (max(limit, burst), window), tiers


def user_tiers(scenario):
    """Each user's tier, as the traffic model names and assigns them."""
    out = {}
    for s in scenario.get("traffic", []):
        if "tier" in s:
            tiers = [(s["tier"], 1)]
        elif "tiers" in s:
            tiers = [(t["name"], t["weight"]) for t in s["tiers"]]
        else:
            continue
        if "user" in s:
            out.setdefault(s["user"], tier_of(tiers, 0, 1))
        else:
            n = s.get("users", 1)
            for j in range(n):
                out.setdefault(f"{s['name']}-{j}", tier_of(tiers, j, n))
    return out


def count_in(sorted_times, t, window):
    """Entries in (t - window, t]."""
    return bisect.bisect_right(sorted_times, t) - bisect.bisect_right(sorted_times, t - window)


def needless(admitted, counts, t, ceiling, window):
    """One more admission at t keeps every window (s - W, s], s in [t, t + W), within ceiling.

    `counts[k]` is count_in(admitted, admitted[k], window), counted once per client: the windows
    of the admissions after t are read, not recounted for every rejection.
    """
    if count_in(admitted, t, window) >= ceiling:
        return False
    lo = bisect.bisect_right(admitted, t)
    hi = bisect.bisect_left(admitted, t + window)
    return max(counts[lo:hi], default=-1) < ceiling


def judge(rows, bound_of, legit_source):
    """The figures of one contender's rows (in log order)."""
    exact = defaultdict(list)  # the exact limiter's admissions per client
    admissions = []  # (time, order, client, source): arrivals admitted and releases
    rejections = []  # (time, client, source, shared)
    first_user = {}
    shared_keys = set()
    wrongly_allowed = wrongly_rejected = 0
    for i, r in enumerate(rows):
        t, client, source = int(r["time_ns"]), r["client"], r["source"]
        ceiling, window = bound_of(client)
        log = exact[client]
        while log and log[0] + window <= t:
            log.pop(0)
        exact_admits = len(log) < ceiling
        if exact_admits:
            log.append(t)
        first = first_user.setdefault(r["key"], client)
        if first != client:
            shared_keys.add(r["key"])
        admitted = r["outcome"] != "reject"
        wrongly_allowed += admitted and not exact_admits
        wrongly_rejected += (not admitted) and exact_admits
        if r["outcome"] == "allow":
            admissions.append((t, 1, i, client, source))
        elif r["outcome"] == "delay":
            # Released at t + delay, before the arrivals of that instant.
            admissions.append((t + int(r["delay_ns"]), 0, i, client, source))
        else:
            rejections.append((t, client, source, r["key"] in shared_keys))
    admissions.sort()
    per_client = defaultdict(list)
    by_source = defaultdict(lambda: defaultdict(int))
    violations = 0
    for t, _, _, client, source in admissions:
        times = per_client[client]
        times.append(t)
        ceiling, window = bound_of(client)
        if count_in(times, t, window) > ceiling:
            violations += 1
            by_source[source]["policy_violations"] += 1
    hurt, hit = set(), set()
    needless_total = collateral = 0
    counts = {}
    for t, client, source, shared in rejections:
        ceiling, window = bound_of(client)
        times = per_client[client]
        if client not in counts:
            counts[client] = [count_in(times, s, window) for s in times]
        if not needless(times, counts[client], t, ceiling, window):
            continue
        needless_total += 1
        by_source[source]["needless_rejections"] += 1
        if legit_source(source):
            if client not in hurt:
                hurt.add(client)
                by_source[source]["clients_hurt"] += 1
            if shared:
                collateral += 1
                hit.add(client)
                by_source[source]["collateral_rejections"] += 1
    return {
        "policy_violations": violations,
        "needless_rejections": needless_total,
        "wrongly_allowed": wrongly_allowed,
        "wrongly_rejected": wrongly_rejected,
        "clients_hurt": len(hurt),
        "collateral_rejections": collateral,
        "collateral_clients": len(hit),
        "by_source": by_source,
    }


def keyed_like_the_policy(scenario, name):
    """Whether the log's key (the policy's) is the key every refusal of `name` was made on."""
    for c in scenario.get("contender", []):
        if c["name"] == name:
            key = scenario["policy"].get("key", "ip")
            return all(r.get("key", key) == key for r in c.get("rule", []))
    return True  # the short form keys on the policy's key


def main(scenario_path, decisions_path, summary_path):
    with open(scenario_path, "rb") as f:
        scenario = tomllib.load(f)
    base, tiers = entitlements(scenario)
    tier = user_tiers(scenario)

    def bound_of(client):
        return tiers.get(tier.get(client), base)

    rows = defaultdict(list)
    with open(decisions_path, newline="") as f:
        for r in csv.DictReader(f):
            rows[r["algorithm"]].append(r)
    with open(summary_path) as f:
        summary = json.load(f)
    # A source's role as the run resolved it (a kind may default it), not what is judged here.
    roles = {s["name"]: s["role"] for s in summary["scenario"]["sources"]}
    failed = False
    for a in summary["algorithms"]:
        name = a["algorithm"]
        got = judge(rows[name], bound_of, lambda s: roles.get(s) == "legit")
        checked = ["policy_violations", "needless_rejections", "wrongly_allowed",
                   "wrongly_rejected", "clients_hurt"]
        per_source = ["policy_violations", "needless_rejections", "clients_hurt"]
        if keyed_like_the_policy(scenario, name) or a["rejected"] == 0:
            checked += ["collateral_rejections", "collateral_clients"]
            per_source.append("collateral_rejections")
        for field in checked:
            if got[field] != a[field]:
                print(f"{name}: {field} {a[field]} in summary.json, {got[field]} recomputed")
                failed = True
        for s in a["sources"]:
            for field in per_source:
                want = got["by_source"][s["name"]][field]
                if s[field] != want:
                    print(f"{name} source={s['name']}: {field} {s[field]}, recomputed {want}")
                    failed = True
        print(name, " ".join(f"{k}={got[k]}" for k in checked))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(*sys.argv[1:])
