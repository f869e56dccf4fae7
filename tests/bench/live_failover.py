#!/usr/bin/env python3
"""tests/bench/live_failover.py: the scrapes and probes of tests/bench/live-failover.sh, and their report.

    live_failover.py mapping IN OUT
        OUT: the table IN plus one row, live_failover_scheduler_since = slurm_last_proc_req_start
        (when the slurmctld process that answered /metrics/scheduler began counting: which
        controller process a served scheduler answer came from)
    live_failover.py watch DIR STOPFILE --shim NAME=URL... --ctl NAME=URL... [--every S]
        until STOPFILE exists: GET each shim URL every S s (1) with
        X-Prometheus-Scrape-Timeout-Seconds: 10, one JSON line per scrape in DIR/scrapes-NAME.jsonl;
        and every S/2 s each controller's /metrics/scheduler, redirects not followed, one JSON
        line per probe in DIR/probes-NAME.jsonl (the ground truth: which controller was primary when)
    live_failover.py report DIR EVENTS
        per shim: every scrape (time from the first event, duration, status, the controller it
        says answered, which controller each served endpoint's answer came from, checks), then a
        markdown table per shim, over the whole run and per cycle (each "cycle NAME: ..." event
        to the next): scrapes, not 200, 200 with an endpoint down, longest run not 200, scrapes
        over 1 s, max duration, scrapes mixing controllers, series disagreeing; the seconds from
        the cycle's start until ctlb is primary (probes) and until a scrape is answered by it,
        and from the cycle's "failback: ..." event until ctla is primary again and a scrape is
        answered by it; DIR/summary.txt: "NAME MIXING MAXDURATION" per shim over the whole run

A scrape "mixes controllers" when the answers it served did not all come from one controller:
  * sched: its live_failover_scheduler_since value is a controller process' (seen in a probe's
    200, and in no other controller's: a controller that has just taken control answers 0, as the
    other may) other than the controller the shim says answered (slurm_exporter_shim_controller_info
    role="primary"), or
  * fetched: the endpoints it served (slurm_exporter_shim_up 1) were fetched while different
    controllers were primary (by the probes; a fetch time within one probe of a change of
    primary is not judged). An answer's fetch time: the end of the first scrape showing its
    slurm_exporter_shim_upstream_fetches_total, less its slurm_exporter_shim_payload_age_seconds
    there (the shim may serve one rendered exposition, self metrics included, several times), or
  * said: one of those endpoints was fetched while another controller than the one the shim says
    answered was primary (the shim names one controller and serves another's answers), or
  * roles: more than one controller has role="primary".
The "agree" checks compare legacy series computed from different endpoints that must agree on
this cluster (static, single-partition jobs): slurm_cpus_total against batch's
slurm_partition_cpus_total (nodes against partitions), slurm_cpus_alloc against batch's
slurm_partition_cpus_allocated, slurm_queue_pending against the sum of
slurm_partition_jobs_pending (jobs-users-accts against partitions).
Python 3, stdlib only.
"""
import http.client
import json
import os
import re
import sys
import threading
import time
import urllib.parse

IDENT = "live_failover_scheduler_since"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
CTLD_ENDPOINTS = ("jobs", "nodes", "partitions", "scheduler", "jobs-users-accts")


def mapping(src, dst):
    with open(src) as f:
        table = json.load(f)
    table["metrics"].append({
        "name": IDENT, "help": "tests/bench/live-failover.sh: slurm_last_proc_req_start of the scheduler answer",
        "type": "gauge", "fidelity": "exact", "expr": "slurm_last_proc_req_start"})
    with open(dst, "w") as f:
        json.dump(table, f, indent=1)


def parse(text):
    """[(name, {labels}, value)] of an exposition"""
    out = []
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if not m:
            continue
        try:
            v = float(m.group(3))
        except ValueError:
            continue
        out.append((m.group(1), dict(LABEL.findall(m.group(2) or "")), v))
    return out


def get(url, timeout, headers=None):
    """(status, headers dict, body) without following redirects; (0, {}, error) on no answer"""
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        c.request("GET", u.path + ("?" + u.query if u.query else ""), headers=headers or {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException) as e:
        return 0, {}, "%s: %s" % (type(e).__name__, e)
    finally:
        c.close()


def summarize(samples):
    """the facts of one shim exposition that the report reads"""
    s = {"roles": {}, "switches": None, "ep": {}, "ident": None, "legacy": {}}
    part_pending = None
    for name, lab, v in samples:
        if name == "slurm_exporter_shim_controller_info":
            s["roles"][lab.get("url", "")] = lab.get("role", "")
        elif name == "slurm_exporter_shim_controller_switches_total":
            s["switches"] = v
        elif name in ("slurm_exporter_shim_up", "slurm_exporter_shim_payload_age_seconds",
                      "slurm_exporter_shim_upstream_fetches_total", "slurm_exporter_shim_http_status"):
            key = name[len("slurm_exporter_shim_"):]
            s["ep"].setdefault(lab.get("endpoint", ""), {})[key] = v
        elif name == IDENT:
            s["ident"] = int(v)
        elif name in ("slurm_cpus_total", "slurm_cpus_alloc", "slurm_queue_pending"):
            s["legacy"][name] = v
        elif name in ("slurm_partition_cpus_total", "slurm_partition_cpus_allocated") and \
                lab.get("partition") == "batch":
            s["legacy"][name] = v
        elif name == "slurm_partition_jobs_pending":
            part_pending = (part_pending or 0) + v
    if part_pending is not None:
        s["legacy"]["slurm_partition_jobs_pending"] = part_pending
    return s


def scrape_loop(name, url, every, out, stop):
    with open(out, "a") as f:
        nxt = time.time()
        while not os.path.exists(stop):
            t0 = time.time()
            status, _, body = get(url, 15, {"X-Prometheus-Scrape-Timeout-Seconds": "10"})
            t1 = time.time()
            rec = {"t": t0, "dur": t1 - t0, "status": status}
            rec.update(summarize(parse(body)) if status == 200 else {"body": body[:400]})
            f.write(json.dumps(rec) + "\n")
            f.flush()
            nxt += every
            time.sleep(max(0.0, nxt - time.time()))
            if nxt < time.time():
                nxt = time.time()


def probe_loop(name, url, every, out, stop):
    with open(out, "a") as f:
        while not os.path.exists(stop):
            t = time.time()
            status, hdr, body = get(url + "/metrics/scheduler", 3)
            rec = {"t": t, "ctl": name, "status": status}
            if status == 200:
                for n, _, v in parse(body):
                    if n == "slurm_last_proc_req_start":
                        rec["ident"] = int(v)
            elif status:
                rec["location"] = hdr.get("Location")
            else:
                rec["error"] = body[:200]
            f.write(json.dumps(rec) + "\n")
            f.flush()
            time.sleep(max(0.0, t + every - time.time()))


def watch(argv):
    d, stop = argv[0], argv[1]
    shims, ctls, every, i = [], [], 1.0, 2
    while i < len(argv):
        if argv[i] == "--shim":
            shims.append(argv[i + 1].split("=", 1))
        elif argv[i] == "--ctl":
            ctls.append(argv[i + 1].split("=", 1))
        elif argv[i] == "--every":
            every = float(argv[i + 1])
        else:
            sys.exit("live_failover: unknown argument " + argv[i])
        i += 2
    threads = [threading.Thread(target=probe_loop, args=(name, url, every / 2,
                                                         os.path.join(d, "probes-%s.jsonl" % name), stop))
               for name, url in ctls]
    for name, url in shims:
        threads.append(threading.Thread(target=scrape_loop,
                                        args=(name, url, every, os.path.join(d, "scrapes-%s.jsonl" % name), stop)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class Truth:
    """which controller was primary when, and whose process a scheduler identity is, from the probes"""

    def __init__(self, probes, urls):
        self.by_ctl = {}
        self.ident = {}
        seen = {}
        for p in probes:
            self.by_ctl.setdefault(p["ctl"], []).append((p["t"], p["status"] == 200))
            if "ident" in p:
                seen.setdefault(p["ident"], set()).add(p["ctl"])
        # an identity seen from two controllers (0: no request yet) names no process
        self.ident = {i: next(iter(c)) for i, c in seen.items() if len(c) == 1}
        self.url = urls  # ctl name -> URL

    def primary_at(self, t):
        """the one controller whose probes just before and just after t were 200 (None: unclear)"""
        found = []
        for ctl, seq in self.by_ctl.items():
            before = [ok for (pt, ok) in seq if pt <= t]
            after = [ok for (pt, ok) in seq if pt > t]
            if before and after and before[-1] and after[0]:
                found.append(ctl)
        return found[0] if len(found) == 1 else None

    def name_of_url(self, url):
        for n, u in self.url.items():
            if u == url:
                return n
        return None


def fetch_times(recs):
    """{(endpoint, fetch count): when that answer was fetched}: the first scrape that shows the
    count, its end less the answer's age then. The shim may serve one rendered exposition to
    several scrapes (its self metrics included, so a later one shows the age at rendering)."""
    out = {}
    for r in recs:
        for ep, v in r.get("ep", {}).items():
            key = (ep, v.get("upstream_fetches_total"))
            if "payload_age_seconds" in v and key not in out:
                out[key] = r["t"] + r["dur"] - v["payload_age_seconds"]
    return out


def judge(rec, truth, fetched):
    """(answered-by, scheduler answer's controller, provenance {endpoint: ctl}, list of mixing
    reasons, list of disagreements); fetched: fetch_times() of the shim's scrapes"""
    mix, disagree = [], []
    prim = [u for u, r in rec.get("roles", {}).items() if r == "primary"]
    if len(prim) > 1:
        mix.append("roles")
    said = truth.name_of_url(prim[0]) if len(prim) == 1 else None
    prov = {}
    for ep, v in rec.get("ep", {}).items():
        key = (ep, v.get("upstream_fetches_total"))
        if ep not in CTLD_ENDPOINTS or v.get("up") != 1 or key not in fetched:
            continue
        prov[ep] = truth.primary_at(fetched[key])
    known = {c for c in prov.values() if c}
    if len(known) > 1:
        mix.append("fetched")
    if said and known - {said}:
        mix.append("said")
    sched = truth.ident.get(rec.get("ident")) if rec.get("ident") is not None else None
    if sched and said and sched != said:
        mix.append("sched")
    lg = rec.get("legacy", {})
    for a, b in (("slurm_cpus_total", "slurm_partition_cpus_total"),
                 ("slurm_cpus_alloc", "slurm_partition_cpus_allocated"),
                 ("slurm_queue_pending", "slurm_partition_jobs_pending")):
        if a in lg and b in lg and lg[a] != lg[b]:
            disagree.append("%s %g != %s %g" % (a, lg[a], b, lg[b]))
    return said, sched, prov, mix, disagree


def cycles_of(events):
    """[(name, start, failback, end)]: each "cycle NAME: ..." event to the next one (or "end"),
    failback: its "failback: ..." event (None: none)"""
    starts = [(t, w.split(":")[0].split()[1]) for t, w in events if w.startswith("cycle ")]
    ends = [t for t, w in events if w == "end"]
    out = []
    for i, (t, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else (ends[0] if ends else float("inf"))
        back = [bt for bt, w in events if w.startswith("failback:") and t <= bt < end]
        out.append((name, t, back[0] if back else None, end))
    return out


def first_primary(truth, probes, ctl, lo, hi):
    """seconds from lo to the first probe in [lo, hi) at which ctl is the primary"""
    for p in probes:
        if lo <= p["t"] < hi and truth.primary_at(p["t"]) == ctl:
            return p["t"] - lo
    return None


def row(recs, truth, lo, back, hi):
    """the table's figures over the scrapes started in [lo, hi); back: the failback's start"""
    fetched = fetch_times(recs)
    rs = [r for r in recs if lo <= r["t"] < hi]
    f = {"n": len(rs), "bad": 0, "partial": 0, "longest": 0, "slow": 0, "maxdur": 0.0, "mixed": 0,
         "dis": 0, "to_b": None, "to_a": None}
    run = 0
    for r in rs:
        f["maxdur"] = max(f["maxdur"], r["dur"])
        f["slow"] += r["dur"] > 1
        run = run + 1 if r["status"] != 200 else 0
        f["longest"] = max(f["longest"], run)
        if r["status"] != 200:
            f["bad"] += 1
            continue
        said, _, _, mix, disagree = judge(r, truth, fetched)
        f["mixed"] += bool(mix)
        f["dis"] += bool(disagree)
        f["partial"] += any(v.get("up") == 0 for ep, v in r.get("ep", {}).items() if ep in CTLD_ENDPOINTS)
        if said == "b" and f["to_b"] is None:
            f["to_b"] = r["t"] + r["dur"] - lo
        if said == "a" and back is not None and r["t"] >= back and f["to_a"] is None:
            f["to_a"] = r["t"] + r["dur"] - back
    return f


def table(shims, recs, truth, probes, events, t0, out):
    """the markdown table, and "NAME MIXING MAXDURATION" lines (the whole run) into out"""
    spans = [("all", t0, None, float("inf"))] + cycles_of(events)
    print("\n| shim given | cycle | scrapes | not 200 | 200 with an endpoint down | longest run not 200 |"
          " scrapes over 1 s | max duration (s) | mixing controllers | series disagreeing |"
          " ctlb primary / shim on ctlb (s from the cycle's start) |"
          " ctla primary / shim on ctla (s from the failback's start) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    sec = lambda v: "-" if v is None else "%.1f" % v
    for n in shims:
        for cyc, lo, back, hi in spans:
            f = row(recs[n], truth, lo, back, hi)
            if cyc == "all":
                out.write("%s %d %.3f\n" % (n, f["mixed"], f["maxdur"]))
                tb = ta = "-"
            else:
                tb = "%s / %s" % (sec(first_primary(truth, probes, "b", lo, hi)), sec(f["to_b"]))
                ta = "-" if back is None else "%s / %s" % (sec(first_primary(truth, probes, "a", back, hi)),
                                                           sec(f["to_a"]))
            print("| %s | %s | %d | %d | %d | %d | %d | %.3f | %d | %d | %s | %s |" % (
                n, cyc, f["n"], f["bad"], f["partial"], f["longest"], f["slow"], f["maxdur"], f["mixed"],
                f["dis"], tb, ta))


def print_scrapes(name, recs, truth, t0):
    print("\nshim %s: every scrape (t s, duration s, status, answered by, scheduler answer's "
          "process, endpoint provenance, mixing, disagreements)" % name)
    fetched = fetch_times(recs)
    for r in recs:
        if r["status"] != 200:
            print("  %7.1f %6.3f %3d  %s" % (r["t"] - t0, r["dur"], r["status"],
                                             r.get("body", "").strip().replace("\n", " | ")[:300]))
            continue
        said, sched, prov, mix, disagree = judge(r, truth, fetched)
        pv = ",".join("%s:%s" % (ep, c or "?") for ep, c in sorted(prov.items()))
        print("  %7.1f %6.3f %3d  %-4s sched:%-4s %s%s%s" % (
            r["t"] - t0, r["dur"], r["status"], said or "?", sched or "?", pv,
            "  MIX(" + ",".join(mix) + ")" if mix else "",
            "  DISAGREE(" + "; ".join(disagree) + ")" if disagree else ""))


def report(argv):
    d, events_file = argv[0], argv[1]
    events = []
    with open(events_file) as f:
        for line in f:
            t, _, what = line.strip().partition(" ")
            events.append((float(t), what))
    t0 = events[0][0]
    urls = {}
    for _, what in events:
        m = re.match(r"controller (\S+) (\S+)", what)
        if m:
            urls[m.group(1)] = m.group(2)
    probes = sorted((p for f in sorted(os.listdir(d)) if f.startswith("probes-")
                     for p in load(os.path.join(d, f))), key=lambda p: p["t"])
    truth = Truth(probes, urls)
    print("events (s from the first):")
    for t, what in events:
        print("  %7.1f  %s" % (t - t0, what))
    print("\nprimary by the probes (200 on /metrics/scheduler), changes:")
    last = "start"
    for p in probes:
        now = truth.primary_at(p["t"])
        if now != last:
            print("  %7.1f  %s" % (p["t"] - t0, now or "(none or unclear)"))
            last = now
    shims = sorted(f[len("scrapes-"):-len(".jsonl")] for f in os.listdir(d) if f.startswith("scrapes-"))
    recs = {n: load(os.path.join(d, "scrapes-%s.jsonl" % n)) for n in shims}
    for n in shims:
        print_scrapes(n, recs[n], truth, t0)
    with open(os.path.join(d, "summary.txt"), "w") as out:
        table(shims, recs, truth, probes, events, t0, out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "mapping" and len(argv) == 2:
        mapping(*argv)
    elif cmd == "watch" and len(argv) >= 2:
        watch(argv)
    elif cmd == "report" and len(argv) == 2:
        report(argv)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
