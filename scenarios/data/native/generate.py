#!/usr/bin/env python3
"""Writes the native-log samples of scenarios/data/native/ (docs/traffic.md, "Native log formats").

Each sample is five minutes (2026-11-29 12:00 to 12:05 UTC) of one synthetic site, written in
the format's own documented fields: 12 visitors browsing at about 3 requests/min each, and from
12:01 to 12:03 one scraper at 2 requests/s. Production's limiter allowed 60 requests per minute
per client address (fixed minute windows), so it refused the scraper's requests past the 60th of
each minute; each format records that refusal its own way (ALB: a WAF 403; Cloudflare: a
`SecuritySources` entry `rateLimit` whose `SecurityActions` entry is `block`; Envoy: 429 with
`RL`; Google Cloud: a Cloud Armor `THROTTLE` rule's `DENY`, its `rateLimitAction` exceeded;
CloudFront records only the 429). nginx's sample is decided by nginx's own `limit_req` instead
(its leaky bucket, `limit_req_nodelay()`), and records it in `$limit_req_status`. k6 and vegeta
are load generators: their samples are one load
test each, a client's view (no address, the status it got).

Deterministic (seeded): `python3 scenarios/data/native/generate.py` rewrites the same bytes.
"""

import json
import os
import random
from datetime import datetime, timedelta, timezone

START = datetime(2026, 11, 29, 12, 0, 0, tzinfo=timezone.utc)
PAGES = [("GET", "/"), ("GET", "/products"), ("GET", "/products/7"), ("POST", "/cart"),
         ("GET", "/api/items"), ("POST", "/login")]
HERE = os.path.dirname(os.path.abspath(__file__))


def requests(seed, prefix):
    """(offset_us, ip, method, path, refused) in time order."""
    rng = random.Random(seed)
    out = []
    for v in range(12):
        ip = f"{prefix}.{10 + v}"
        t = rng.uniform(0, 20)
        while t < 300:
            method, path = rng.choice(PAGES)
            out.append((int(t * 1e6), ip, method, path))
            t += rng.expovariate(3 / 60)
    scraper = f"{prefix}.66"
    for k in range(240):
        out.append((60_000_000 + k * 500_000 + rng.randrange(0, 1000), scraper, "GET", "/products/7"))
    out.sort()
    # Production's fixed minute windows of 60 per address.
    counts, rows = {}, []
    for (us, ip, method, path) in out:
        key = (ip, us // 60_000_000)
        counts[key] = counts.get(key, 0) + 1
        rows.append((us, ip, method, path, counts[key] > 60))
    return rows


def stamp(us, digits=6):
    t = START + timedelta(microseconds=us)
    frac = f"{t.microsecond:06d}"[:digits]
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if digits else "") + "Z"


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        for line in lines:
            f.write(line + "\n")


def alb():
    for (us, ip, method, path, refused) in requests(1, "192.0.2"):
        status = "403" if refused else "200"
        target = "-" if refused else "200"
        actions = "waf" if refused else "waf,forward"
        yield (f'https {stamp(us + 2000)} app/my-loadbalancer/50dc6c495c0c9188 {ip}:{40000 + us % 20000} '
               f'10.0.0.1:80 0.000 0.001 0.000 {status} {target} 34 366 '
               f'"{method} https://shop.example.com:443{path} HTTP/1.1" "Mozilla/5.0" '
               f'ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 '
               f'arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 '
               f'"Root=1-58337262-36d228ad5d99923122bbe354" "shop.example.com" "-" 0 {stamp(us)} '
               f'"{actions}" "-" "-" "10.0.0.1:80" "{target}" "-" "-"')


CF_FIELDS = ("date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status "
             "cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id "
             "x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher "
             "x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port "
             "time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len "
             "sc-range-start sc-range-end")


def cloudfront():
    yield "#Version: 1.0"
    yield "#Fields: " + CF_FIELDS
    for (us, ip, method, path, refused) in requests(2, "198.51.100"):
        t = START + timedelta(microseconds=us)
        status, result = ("429", "Error") if refused else ("200", "Miss")
        yield "\t".join([t.strftime("%Y-%m-%d"), t.strftime("%H:%M:%S"), "LAX1", "392", ip, method,
                         "d111111abcdef8.cloudfront.net", path, status, "-", "Mozilla/5.0", "-", "-",
                         result, "SOX4xwn4XV6Q4rgb7XiVGOHms_BGlTAC4KyHmureZmBNrjGdRLiNIQ==",
                         "shop.example.com", "https", "23", "0.001", "-", "TLSv1.3",
                         "TLS_AES_128_GCM_SHA256", result, "HTTP/2.0", "-", "-", "11040", "0.001",
                         result, "text/html", "78", "-", "-"])


def cloudflare():
    for (us, ip, method, path, refused) in requests(3, "203.0.113"):
        yield json.dumps({
            "ClientIP": ip, "ClientRequestHost": "shop.example.com", "ClientRequestMethod": method,
            "ClientRequestURI": path, "EdgeResponseStatus": 429 if refused else 200,
            "EdgeStartTimestamp": int((START.timestamp() * 1_000_000 + us) * 1000),
            "SecurityAction": "block" if refused else "",
            "SecurityActions": ["block"] if refused else [],
            "SecurityRuleIDs": ["0b5e0e3a3d1c4e6f9a1b2c3d4e5f6a7b"] if refused else [],
            "SecuritySources": ["rateLimit"] if refused else [],
            "RayID": f"{us:016x}"}, separators=(",", ":"))


def envoy():
    for (us, ip, method, path, refused) in requests(4, "192.0.2"):
        code, flags = ("429", "RL") if refused else ("200", "-")
        yield (f'[{stamp(us, 3)}] "{method} {path} HTTP/1.1" {code} {flags} 0 {18 if refused else 512} '
               f'1 {"-" if refused else "1"} "{ip}" "Mozilla/5.0" "{us:08x}-0000-4000-8000-000000000000" '
               f'"shop.example.com" "{"-" if refused else "10.0.2.1:80"}"')


def envoy_json():
    for (us, ip, method, path, refused) in requests(5, "198.51.100"):
        yield json.dumps({
            "start_time": stamp(us, 3), "method": method, "path": path, "protocol": "HTTP/1.1",
            "response_code": 429 if refused else 200, "response_flags": "RL" if refused else "-",
            "bytes_received": 0, "bytes_sent": 18 if refused else 512, "duration": 1,
            "x_forwarded_for": None, "user_agent": "Mozilla/5.0", "authority": "shop.example.com",
            "upstream_host": None if refused else "10.0.2.1:80",
            "downstream_remote_address": f"{ip}:{40000 + us % 20000}"}, separators=(",", ":"))


def gclb():
    for (us, ip, method, path, refused) in requests(6, "100.64.0"):
        payload = {"@type": "type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry",
                   "statusDetails": "denied_by_security_policy" if refused else "response_sent_by_backend",
                   "enforcedSecurityPolicy": {"name": "per-ip-throttle", "priority": 1000,
                                              "configuredAction": "THROTTLE",
                                              "outcome": "DENY" if refused else "ACCEPT",
                                              "rateLimitAction": {
                                                  "key": ip,
                                                  "outcome": "RATE_LIMIT_THRESHOLD_EXCEED" if refused
                                                  else "RATE_LIMIT_THRESHOLD_CONFORM"}}}
        yield json.dumps({
            "insertId": f"{us:x}", "jsonPayload": payload,
            "httpRequest": {"requestMethod": method, "requestUrl": f"https://shop.example.com{path}",
                            "status": 429 if refused else 200, "userAgent": "Mozilla/5.0",
                            "remoteIp": ip, "serverIp": "10.128.0.2", "latency": "0.001s"},
            "resource": {"type": "http_load_balancer"}, "timestamp": stamp(us, 6),
            "severity": "INFO", "logName": "projects/shop/logs/requests"}, separators=(",", ":"))


def k6():
    # 5 virtual users, one request every second each for 2 minutes; the server allowed 200/min
    # on /api/items and answered 429 past that (k6 sees only the status). Only the first
    # requests also have an `http_req_duration` point (a real run has one per request).
    rng = random.Random(7)
    yield json.dumps({"type": "Metric", "data": {"name": "http_reqs", "type": "counter",
                      "contains": "default", "thresholds": [], "submetrics": None},
                      "metric": "http_reqs"}, separators=(",", ":"))
    served = {}
    for k in range(600):
        vu = k % 5 + 1
        us = (k // 5) * 1_000_000 + vu * 150_000 + rng.randrange(0, 5000)
        minute = us // 60_000_000
        served[minute] = served.get(minute, 0) + 1
        status = "429" if served[minute] > 200 else "200"
        tags = {"expected_response": "true" if status == "200" else "false", "group": "",
                "method": "GET", "name": "https://shop.example.com/api/items", "proto": "HTTP/1.1",
                "scenario": "default", "status": status, "url": "https://shop.example.com/api/items",
                "vu": str(vu)}
        for metric, value in (("http_reqs", 1), ("http_req_duration", 3.2))[:2 if k < 20 else 1]:
            yield json.dumps({"metric": metric, "type": "Point",
                              "data": {"time": stamp(us, 6), "value": value, "tags": tags}},
                             separators=(",", ":"))


def limit_req_nodelay(rows, rate, burst):
    """nginx's `limit_req zone=... burst=B nodelay` at `rate` r/s per address, on nginx's
    millisecond clock, as ngx_http_limit_req_lookup computes it: excess (in 1/1000 requests)
    drains at rate*1000 per second, each request adds 1000, a request that would take it past
    burst*1000 is REJECTED and changes nothing; a new address starts at 0."""
    state, out = {}, []
    for (ms, ip) in rows:
        if ip not in state:
            state[ip] = (0, ms)
            out.append(True)
            continue
        excess, last = state[ip]
        excess = max(excess - rate * 1000 * (ms - last) // 1000 + 1000, 0)
        if excess > burst * 1000:
            out.append(False)
        else:
            state[ip] = (excess, ms)
            out.append(True)
    return out


def nginx():
    # The default text log_format rlsim reads (docs/traffic.md): `combined`, then `$msec
    # $request_time $limit_req_status`, from a server with
    # `limit_req_zone $binary_remote_addr zone=perip:10m rate=1r/s;`
    # `limit_req zone=perip burst=60 nodelay; limit_req_status 429;`
    # (scenarios/configs/nginx/replay_shop.conf). A request starts on its millisecond (nginx's
    # clock); `$msec` is logged after `$request_time`, `$time_local` is the end's second.
    rng = random.Random(9)
    rows = [(us // 1000, ip, method, path) for (us, ip, method, path, _) in requests(8, "192.0.2")]
    passed = limit_req_nodelay([(ms, ip) for (ms, ip, _, _) in rows], rate=1, burst=60)
    for (ms, ip, method, path), ok in zip(rows, passed):
        took = rng.randrange(1, 5) if ok else 0
        end = ms + took
        t = START + timedelta(milliseconds=end)
        status = ("201" if method == "POST" else "200") if ok else "429"
        yield (f'{ip} - - [{t.strftime("%d/%b/%Y:%H:%M:%S +0000")}] "{method} {path} HTTP/1.1" '
               f'{status} {512 if ok else 162} "-" "Mozilla/5.0 (X11; Linux x86_64)" '
               f'{int(START.timestamp()) + end // 1000}.{end % 1000:03d} {took // 1000}.{took % 1000:03d} '
               f'{"PASSED" if ok else "REJECTED"}')


def vegeta():
    # `vegeta attack -rate=5/s -duration=2m`, GET /api/items and POST /api/orders alternately;
    # the server allowed 120/min per endpoint.
    served = {}
    for k in range(600):
        us = k * 200_000
        method, path = ("GET", "/api/items") if k % 2 == 0 else ("POST", "/api/orders")
        key = (path, us // 60_000_000)
        served[key] = served.get(key, 0) + 1
        code = 429 if served[key] > 120 else 200
        yield json.dumps({"attack": "", "seq": k, "code": code, "timestamp": stamp(us, 6),
                          "latency": 1_200_000, "bytes_out": 0, "bytes_in": 12, "error": "",
                          "body": None, "method": method, "url": f"https://shop.example.com{path}",
                          "headers": None}, separators=(",", ":"))


def vegeta_csv():
    # The same results as `vegeta encode --to csv` writes them (lib/results.go's CSV encoder):
    # timestamp (Unix ns), code, latency, bytes_out, bytes_in, error, body (base64), attack,
    # seq, method, url, headers (base64; empty without headers).
    for line in vegeta():
        r = json.loads(line)
        t = datetime.strptime(r["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
        ns = (int((t - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1))
              * 1000)
        yield ",".join([str(ns), str(r["code"]), str(r["latency"]), str(r["bytes_out"]),
                        str(r["bytes_in"]), r["error"], "", r["attack"], str(r["seq"]),
                        r["method"], r["url"], ""])


if __name__ == "__main__":
    write("alb.log", alb())
    write("cloudfront.log", cloudfront())
    write("cloudflare.jsonl", cloudflare())
    write("envoy.log", envoy())
    write("envoy.jsonl", envoy_json())
    write("gclb.jsonl", gclb())
    write("k6.jsonl", k6())
    write("nginx.log", nginx())
    write("vegeta.jsonl", vegeta())
    write("vegeta.csv", vegeta_csv())
