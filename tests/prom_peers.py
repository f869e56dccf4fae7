#!/usr/bin/env python3
"""Helper of tests/test_prometheus_peers.sh (Python 3 standard library only).

Subcommands:
  compare --fixture QUERIES.json --mapping MAPPING.json --peer-outputs 'GLOB'
          STATE=PEER_PROM_URL,SHIM_PROM_URL...
      Every query of the fixture (tests/dashboard-queries.py) on both Prometheus servers of each
      state: one scrapes the peer's own output for the state, the other the shim serving the same
      state with MAPPING (slurmctld and slurmrestd). Each query is classed by the families it reads
      (prom_check.metric_names), each family by the mapping row of its name (a histogram's _bucket,
      _sum and _count by its row), with slurmrestd given (the row's first preferred form if it has
      one, else the row):
        * every family an exact row: the two answers must be equal (label sets without job and
          instance, values exactly); a difference fails;
        * else, if a family is no row of the schema, an unavailable row, or never printed by the peer
          in any state (PEER_OUTPUTS): "unavailable", with why (printed once per query);
        * else (an approximate row): "equal" or "differing-approximate", the difference printed with
          the row's fidelity and note; never a failure.
      Every query is evaluated at the same instant on both, a query with a subquery at the next
      multiple of its step (eval_time). Prints a summary per state and one over all states; the last
      line is "N passed, M failed".
  wait-all SECONDS NAME=URL,PID[,DATA]...
      Wait for several processes at once (one Python start instead of one each): URL answers 2xx,
      and with DATA it is a Prometheus whose --storage.tsdb.path is DATA (as prom_check.py
      wait-prom). Prints "NAME died" (its port was taken, say: start it again) or "NAME timeout"
      for each that is not ready; exit 1 if any.
  export-check MAPPING RULES.yml
      The export of --mapping.to-rules says what it cannot express: every row without a native
      form (unavailable without slurmrestd) has a "# NAME: unavailable" line and no rule (a line
      naming slurmrestd where the row has a preferred form, which reads slurmrestd), a row reading
      the shim's record of a scrape (shim_source_*) a "# NAME: not exported" line and no rule, and
      every other row has a `record: NAME` rule. Last line "N passed, M failed".
"""
import glob
import json
import math
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prom_check as pc  # noqa: E402

SELF_PREFIXES = ("go_", "process_", "promhttp_")  # the Go client's own families: no row of any schema


def row_form(row):
    """The form the shim uses with slurmrestd given: the first preferred form, else the row."""
    return (row.get("prefer") or [row])[0]


def printed_families(pattern):
    names = set()
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for name, fam in pc.parse_exposition(f.read()).items():
                if fam["samples"]:
                    names.add(name)
    return names


def family_class(name, rows, printed):
    """(class, why): class is exact, approximate or unavailable."""
    if name == "up":
        return "unavailable", "Prometheus' own up series: its instance label is each target's address"
    row = rows.get(name)
    for part in ("_bucket", "_sum", "_count"):  # a histogram's or summary's part: the row of its family
        whole = rows.get(name[:-len(part)]) if row is None and name.endswith(part) else None
        if whole and whole.get("type") in ("histogram", "summary"):
            row = whole
    if row is None:
        why = "not a row of the schema"
        if name.startswith(SELF_PREFIXES):
            why += " (the Go client's own family, as the mapping's description says)"
        if name not in printed:
            why += "; the peer never prints it in any state"
        return "unavailable", why
    form = row_form(row)
    fid = form.get("fidelity", "exact")
    if name not in printed:
        return "unavailable", "the peer never prints it in any state (row: %s)" % fid
    if fid == "unavailable":
        return "unavailable", "unavailable row: " + (form.get("note") or row.get("note") or "")
    if fid == "approximate":
        return "approximate", "approximate row: " + (form.get("note") or "")
    return "exact", "exact row"


def query_families(q):
    if "variable" in q:
        m = re.match(r"group by \(\w+\) \((.*)\)$", q["query"], re.S)
        return pc.metric_names(m.group(1)) if m else []
    return pc.metric_names(q["query"])


def grafana_regex(rx):
    """A variable's regex as Grafana reads it (/.../flags or a bare pattern), or None."""
    if not rx:
        return None
    m = re.match(r"^/(.*)/([a-z]*)$", rx, re.S)
    return re.compile(m.group(1), re.I if "i" in m.group(2) else 0) if m else re.compile(rx)


SUBQUERY_RE = re.compile(r"\[[^\]:]*:\s*(\d+)([smhd])\s*\]")
UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def eval_time(query, now):
    """When to evaluate: now; a query with subqueries (`[1h:5m]`) at the next multiple of their
    largest step, whose points are aligned to it: now, seconds after Prometheus started, there is no
    such point yet (the latest sample is still within the 5m lookback of the next one, up to a step
    of 5m)."""
    steps = [int(n) * UNIT[u] for n, u in SUBQUERY_RE.findall(query)]
    if not steps:
        return now
    return math.ceil(now / max(steps)) * max(steps)


def answer(prom, q, now):
    """({label key: value}, error): a variable's answer is its values (after its regex) -> 1."""
    data, err = prom.api("/api/v1/query", query=q["query"], time="%.3f" % eval_time(q["query"], now))
    if err:
        return None, err
    if data["resultType"] == "scalar":
        return {(): float(data["result"][1])}, None
    if data["resultType"] != "vector":
        return None, "result type " + data["resultType"]
    out = {}
    for s in data["result"]:
        key = tuple(sorted((k, v) for k, v in s["metric"].items() if k not in pc.IGNORED_LABELS))
        out[key] = float(s["value"][1])
    if "variable" in q:
        rx = grafana_regex(q.get("regex"))
        vals = {dict(k).get(q["label"], "") for k in out}
        out = {((q["label"], v),): 1.0 for v in vals if v and (rx is None or rx.search(v))}
    return out, None


def same(a, b):
    return a.keys() == b.keys() and all(
        (math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in a)


def diff(peer, shim, limit=4):
    lines = []
    for k in sorted(set(peer) | set(shim)):
        if k not in shim:
            lines.append("%s: peer %s, shim none" % (pc.fmt_labels(k), pc.fmt_value(peer[k])))
        elif k not in peer:
            lines.append("%s: peer none, shim %s" % (pc.fmt_labels(k), pc.fmt_value(shim[k])))
        elif not same({0: peer[k]}, {0: shim[k]}):
            lines.append("%s: peer %s, shim %s" % (pc.fmt_labels(k), pc.fmt_value(peer[k]), pc.fmt_value(shim[k])))
    more = len(lines) - limit
    return lines[:limit] + (["... %d more" % more] if more > 0 else [])


def where(q):
    return "%s %s %r" % (q["dashboard"], ("variable $" + q["variable"]) if "variable" in q
                         else "panel '%s'" % q["panel"], q["expr"])


def wait_ready(rep, proms, timeout):
    deadline = time.time() + timeout
    return all(pc.wait_targets(rep, p, what, set(), deadline) for what, p in proms)


def compare_main(args):
    import argparse
    p = argparse.ArgumentParser(prog="prom_peers.py compare")
    p.add_argument("--fixture", required=True)
    p.add_argument("--mapping", required=True)
    p.add_argument("--peer-outputs", required=True, help="glob of the peer's outputs on every state")
    p.add_argument("--timeout", type=float, default=90)
    p.add_argument("--verbose", action="store_true")
    p.add_argument("states", nargs="+", help="STATE=PEER_PROM_URL,SHIM_PROM_URL")
    a = p.parse_args(args)
    with open(a.fixture) as f:
        fixture = json.load(f)
    with open(a.mapping) as f:
        rows = {r["name"]: r for r in json.load(f)["metrics"]}
    src = fixture.get("source") or {}
    if not (src.get("repository") and src.get("tag") and re.fullmatch(r"[0-9a-f]{40}", src.get("commit", ""))):
        rep0 = "the fixture does not name its source repository, tag and commit: %r" % src
        print("FAIL [peers] " + rep0)
        print("0 passed, 1 failed")
        return 1
    printed = printed_families(a.peer_outputs)
    queries = [q for q in fixture["queries"] if q.get("query")]
    skipped = len(fixture["queries"]) - len(queries)
    rep = pc.Report("peers", a.verbose)
    if not printed:
        rep.fail("no peer output matches " + a.peer_outputs)
    # class per query (from the mapping: the same on every state)
    qclass, qwhy = [], []
    for q in queries:
        fams = query_families(q)
        cls = [(n,) + family_class(n, rows, printed) for n in fams]
        worst = "exact"
        for _, c, _ in cls:
            if c == "unavailable" or (c == "approximate" and worst == "exact"):
                worst = c
        qclass.append(worst)
        qwhy.append([(n, w) for n, c, w in cls if c == worst])
        if worst == "unavailable":
            print("unavailable: %s (%s)" % (where(q), ", ".join(n for n, _ in qwhy[-1])))
    why_fam = dict(x for w in qwhy for x in w)
    if "unavailable" in qclass:
        print("the families that make these %d queries unavailable, and why:" % qclass.count("unavailable"))
    for n in sorted(n for i, c in enumerate(qclass) if c == "unavailable" for n, _ in qwhy[i]):
        if why_fam.pop(n, None) is not None:
            print("   %s: %s" % (n, family_class(n, rows, printed)[1]))
    never = sum(1 for w in qwhy if any("never prints" in x for _, x in w))
    differs = {}  # approximate query -> [(state, diff lines)]
    per_query = ["equal"] * len(queries)
    empty_always = [True] * len(queries)  # equal because both are empty on every state
    totals = {"equal": 0, "empty": 0, "approx": 0, "unavailable": 0, "failed": 0}
    for spec in a.states:
        state, urls = spec.split("=", 1)
        peer, shim = (pc.Prom(u) for u in urls.split(","))
        rep.state = state
        if not wait_ready(rep, [("peer", peer), ("shim", shim)], a.timeout):
            per_query = ["failed"] * len(queries)
            continue
        at = time.time()
        cache = {}
        n = {"equal": 0, "empty": 0, "approx": 0, "unavailable": 0, "failed": 0}
        for i, q in enumerate(queries):
            key = (q["query"], q.get("label"), q.get("regex"))
            if key not in cache:
                cache[key] = (answer(peer, q, at), answer(shim, q, at))
            (pa, perr), (sa, serr) = cache[key]
            if perr or serr:
                if perr and serr and qclass[i] == "unavailable":
                    n["unavailable"] += 1
                    continue
                n["failed"] += 1
                per_query[i] = "failed"
                rep.fail("%s: query failed: peer: %s; shim: %s" % (where(q), perr or "ok", serr or "ok"))
                continue
            eq = same(pa, sa)
            if qclass[i] == "unavailable":
                n["unavailable"] += 1
            elif eq:
                n["equal"] += 1
                n["empty"] += not pa
                empty_always[i] = empty_always[i] and not pa
                rep.ok("%s: equal (%d series)" % (where(q), len(pa)))
            elif qclass[i] == "exact":
                empty_always[i] = False
                n["failed"] += 1
                per_query[i] = "failed"
                rep.fail("%s: differs, though every family it reads is an exact row" % where(q), diff(pa, sa))
            else:
                empty_always[i] = False
                n["approx"] += 1
                if per_query[i] == "equal":
                    per_query[i] = "approx"
                differs.setdefault(i, []).append((state, diff(pa, sa, 3)))
        if not n["equal"]:
            rep.fail("no query answered the same on both: nothing was compared")
        for k in totals:
            totals[k] += n[k]
        print("%s: %d queries: %d equal (%d empty on both), %d differing-approximate, %d unavailable, %d failed"
              % (state, len(queries), n["equal"], n["empty"], n["approx"], n["unavailable"], n["failed"]))
    ns = len(a.states)
    for i, found in sorted(differs.items()):
        print("differs (approximate) on %d of %d states: %s" % (len(found), ns, where(queries[i])))
        for n, w in qwhy[i]:
            print("   %s: %s" % (n, w))
        print("   [%s] %s" % (found[0][0], "; ".join(found[0][1])))
    vacuous = [i for i, c in enumerate(qclass) if c != "unavailable" and per_query[i] == "equal" and empty_always[i]]
    for i in vacuous:
        print("empty on both on every state: %s" % where(queries[i]))
    print("all %d states: %d query answers: %d equal (%d empty on both), %d differing-approximate, "
          "%d unavailable, %d failed" % (ns, ns * len(queries), totals["equal"], totals["empty"], totals["approx"],
                                         totals["unavailable"], totals["failed"]))
    distinct = len({q["query"] for q in queries})
    print("per query over the %d states: %d queries (%d distinct; %d not evaluated): %d equal on every state "
          "(%d of them empty on both on every state), %d differing-approximate, %d unavailable (%d read a family "
          "the peer never prints), %d failed"
          % (ns, len(queries), distinct, skipped,
             sum(1 for i, c in enumerate(per_query) if c == "equal" and qclass[i] != "unavailable"), len(vacuous),
             sum(1 for i, c in enumerate(per_query) if c == "approx" and qclass[i] != "unavailable"),
             qclass.count("unavailable"), never, per_query.count("failed")))
    print("%d passed, %d failed" % (rep.passed, rep.failed))
    return 1 if rep.failed else 0


def export_check_main(args):
    mapping, rules = args
    with open(mapping) as f:
        rows = json.load(f)["metrics"]
    with open(rules) as f:
        text = f.read()
    records = set(re.findall(r"^\s*-?\s*record:\s*(\S+)\s*$", text, re.M))
    said = dict(re.findall(r"^# (\S+): (unavailable\b.*)$", text, re.M))
    # rows of the scrape's own record (shim_source_*): Prometheus has no such family
    said_record = dict(re.findall(r"^# (\S+): (not exported\b.*)$", text, re.M))
    rep = pc.Report(os.path.basename(mapping), os.environ.get("VERBOSE") == "1")
    native_unavailable = [r["name"] for r in rows if r.get("fidelity") == "unavailable"]
    for r in rows:
        name = r["name"]
        if name in native_unavailable:
            if name in said and name not in records and (not r.get("prefer") or "slurmrestd" in said[name]):
                rep.ok("%s: the export says it cannot be expressed%s" % (
                    name, " without slurmrestd" if r.get("prefer") else ""))
            else:
                rep.fail("%s: unavailable without slurmrestd, but the export %s" % (
                    name, "has a rule for it" if name in records else "does not say so" if name not in said
                    else "does not name slurmrestd: " + said[name]))
        elif "shim_source_" in r.get("expr", ""):
            if name in said_record and name not in records:
                rep.ok("%s: the export says it reads the shim's record of a scrape" % name)
            else:
                rep.fail("%s: reads the shim's record of a scrape, but the export %s" % (
                    name, "has a rule for it" if name in records else "does not say so"))
        elif name in records:
            rep.ok("%s: a rule" % name)
        else:
            rep.fail("%s: a native form in the mapping, but no rule in the export" % name)
    extra = sorted(records - {r["name"] for r in rows})
    if extra:
        rep.fail("rules for names that are no row: " + ", ".join(extra))
    print("%s: %d rows: %d rules, %d said unavailable without slurmrestd, %d reading the shim's record" % (
        os.path.basename(mapping), len(rows), len(records), len(said), len(said_record)))
    print("%d passed, %d failed" % (rep.passed, rep.failed))
    return 1 if rep.failed else 0


def wait_all_main(args):
    deadline = time.time() + float(args[0])
    rc = 0
    for spec in args[1:]:
        name, rest = spec.split("=", 1)
        parts = rest.split(",")
        url, pid = parts[0].rstrip("/"), int(parts[1])
        left = max(1.0, deadline - time.time())
        if len(parts) > 2:
            def ours(body, data=parts[2]):
                try:
                    return json.loads(body)["data"].get("storage.tsdb.path") == data
                except (ValueError, KeyError, AttributeError):
                    return False
            r = pc.wait_http(url + "/-/ready", left, pid) or pc.wait_http(url + "/api/v1/status/flags", 10, pid, ours)
        else:
            r = pc.wait_http(url, left, pid)
        if r:
            print("%s %s" % (name, "died" if r == 2 else "timeout"))
            rc = 1
    return rc


def main(argv):
    if len(argv) < 2 or argv[1] not in ("compare", "export-check", "wait-all"):
        sys.stderr.write(__doc__)
        return 2
    if argv[1] == "compare":
        return compare_main(argv[2:])
    if argv[1] == "wait-all":
        return wait_all_main(argv[2:])
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    return export_check_main(argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
