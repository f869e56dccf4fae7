#!/usr/bin/env python3
"""Helper of tests/test_prometheus.sh (Python 3 standard library only).

Subcommands:
  ports N                      print N distinct free TCP ports on 127.0.0.1
  wait-http URL SECONDS [PID]  wait until URL answers 2xx (exit 1 on timeout, 2 if PID died)
  wait-prom URL DIR SECONDS PID
                               wait until the Prometheus at URL is ready and is the one whose
                               --storage.tsdb.path is DIR (exit codes as wait-http)
  get URL                      print the body of URL (exit 1 unless 200)
  exprs DASHBOARD.json...      list every target expression (dashboard, panel, expr)
  table MAPPING DASHBOARD...   print the panel -> mapping row -> native family -> endpoint tables
                               (--check FILE: compare with the generated part of FILE instead)
  state ...                    all Prometheus checks of one cluster state (see state_main)

What "state" compares, and how:
  * Prometheus A scrapes the shim; Prometheus B scrapes the fake slurmctld directly with the
    exported scrape.yml and evaluates the exported rules.yml. Both must answer every dashboard
    target expression with status "success".
  * Expected answers come from the shim's own `--once --replay-dir STATE` output, never from
    values written in this file. A small evaluator computes them for the forms the dashboards
    use: a selector `name` or `name{matchers}`; a sum `a + b + ...` (PromQL one-to-one matching on
    identical label sets); `delta(x[d])` (and rate/increase/idelta/deriv), which is 0 for every
    series of x because a fixture state is constant; and a trailing comparison filter
    `<expr> OP number` (keeps the series for which it holds, value unchanged).
    Series are compared by label set, ignoring __name__, job and instance, and by value (exact
    float equality; NaN equals NaN).
  * With the trailing comparison filter removed, each query must return at least one series,
    except when a family it reads is marked unavailable in the mapping (UNAVAILABLE below says
    why) or has no series in this state's --once output (HELP/TYPE only: "no series in this
    cluster state (the old exporter printed none either)"). Both exceptions are printed.
  * An expression the evaluator does not understand (an admin's own dashboard) is compared
    between A and B instead (the shim and the rules must agree), and must not be empty.
  * Every recording rule of rules.yml must be healthy in B and its series must equal the shim's
    output for the family of the same name; the rules must cover exactly the families the shim
    serves, but those of rows reading the shim's record of a scrape (shim_source_*), which have none.
The last line printed is "N passed, M failed" for this state.
"""
import json
import math
import os
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# Dashboard families the mapping marks unavailable, and why. The test checks this list against the
# mapping file, so it cannot silently go stale.
UNAVAILABLE = {
    "slurm_account_fairshare": "sshare's FairShare comes from slurmdbd associations; slurmctld's "
    "native metrics have no fairshare data, so the mapping row is 'unavailable' and no series exists",
}
EMPTY_REASON = "no series in this cluster state (the old exporter printed none either)"
UNPARSEABLE_REASON = ("Prometheus cannot parse /metrics/%s in this state (slurmctld does not escape label "
                      "values), so the rules reading it give nothing (docs/recording-rules.md, 'Label values')")
IGNORED_LABELS = ("__name__", "job", "instance")

# ---------------------------------------------------------------------------------------------
# small utilities


def free_ports(n):
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def http_get(url, timeout=10):
    """(status, body text); status 0 on a connection error."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as e:
        return 0, str(e)


def pid_alive(pid):
    """False once the process is gone or a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def wait_http(url, seconds, pid=None, check=None):
    """0 when url answers 2xx (and check(body) holds), 1 on timeout, 2 when pid has died (it could
    not bind its port, say: then whatever answers there is not ours)."""
    end = time.time() + seconds
    while time.time() < end:
        if pid is not None and not pid_alive(pid):
            return 2
        st, body = http_get(url, timeout=2)
        if 200 <= st < 300 and (check is None or check(body)):
            return 0 if pid is None or pid_alive(pid) else 2
        time.sleep(0.2)
    return 1


def fmt_value(v):
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def fmt_labels(key):
    return "{" + ", ".join('%s="%s"' % (k, v) for k, v in key) + "}"


def same_value(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b


# ---------------------------------------------------------------------------------------------
# the text exposition format (the shim's --once output)


def parse_labels(s, i):
    """Parse `{a="b",...}` starting at s[i] == '{'. Returns (dict, index after '}')."""
    labels = {}
    i += 1
    while True:
        while s[i] in " ,":
            i += 1
        if s[i] == "}":
            return labels, i + 1
        m = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*").match(s, i)
        name = m.group(0)
        i = m.end()
        while s[i] == " ":
            i += 1
        assert s[i] == "=" and s[i + 1] == '"', "bad label at %r" % s
        i += 2
        val = []
        while s[i] != '"':
            if s[i] == "\\":
                val.append({"n": "\n", "\\": "\\", '"': '"'}.get(s[i + 1], "\\" + s[i + 1]))
                i += 2
            else:
                val.append(s[i])
                i += 1
        labels[name] = "".join(val)
        i += 1


def parse_exposition(text):
    """{family: {"type": t, "samples": [(labels dict, float)]}}; a family with HELP/TYPE and no
    sample is present with an empty sample list."""
    fams = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                f = fams.setdefault(parts[2], {"type": "untyped", "samples": []})
                if parts[1] == "TYPE" and len(parts) > 3:
                    f["type"] = parts[3].strip()
            continue
        m = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)
        name = m.group(0)
        i = m.end()
        labels = {}
        if i < len(line) and line[i] == "{":
            labels, i = parse_labels(line, i)
        value = float(line[i:].split()[0])
        fams.setdefault(name, {"type": "untyped", "samples": []})["samples"].append((labels, value))
    return fams


# ---------------------------------------------------------------------------------------------
# dashboards


def dashboard_targets(path):
    """Every target with an expr, also in nested rows/panels: [(dashboard, panel title, expr)]."""
    out = []
    base = os.path.basename(path)

    def walk(o, title):
        if isinstance(o, dict):
            t = o.get("title", title) if ("targets" in o or "panels" in o) else title
            for tg in o.get("targets") or []:
                if isinstance(tg, dict) and str(tg.get("expr", "")).strip():
                    out.append((base, t or "(untitled)", tg["expr"].strip()))
            for k, v in o.items():
                if k != "targets":
                    walk(v, t)
        elif isinstance(o, list):
            for v in o:
                walk(v, title)

    with open(path) as f:
        walk(json.load(f), None)
    return out


def expand_variables(expr):
    """Grafana macros and template variables: intervals become fixed durations, any other
    variable matches everything (`.*`; use =~ in a dashboard for such matchers)."""
    expr = re.sub(r"\$\{?__(rate_interval|interval|range)\}?", "5m", expr)
    expr = re.sub(r"\[\[\w+\]\]|\$\{\w+(:\w+)?\}|\$\w+", ".*", expr)
    return expr


FILTER_RE = re.compile(r"^(?P<body>.*\S)\s*(?P<op>==|!=|>=|<=|>|<)\s*"
                       r"(?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$", re.S)


def split_filter(expr):
    """(expression without its trailing `OP number` filter, (op, number) or None)."""
    m = FILTER_RE.match(expr)
    if not m or m.group("body").rstrip().endswith("bool"):
        return expr, None
    return m.group("body").strip(), (m.group("op"), float(m.group("num")))


# ---------------------------------------------------------------------------------------------
# the small evaluator over the --once output

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
TERM_RE = re.compile(r"\s*(?:(?P<fn>delta|idelta|increase|rate|deriv)\s*\(\s*)?(?P<name>" + NAME +
                     r")\s*(?:\{(?P<m>(?:[^}\"']|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')*)\})?\s*"
                     r"(?:\[(?P<range>[^\]]+)\]\s*)?(?(fn)\))\s*$", re.S)
MATCHER_RE = re.compile(r"\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')\s*,?")


def split_plus(body):
    """Split on top-level '+' (outside braces, brackets, parentheses and quotes)."""
    parts, depth, quote, cur = [], 0, None, []
    i = 0
    while i < len(body):
        c = body[i]
        if quote:
            cur.append(c)
            if c == "\\":
                cur.append(body[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            cur.append(c)
        elif c in "{[(":
            depth += 1
            cur.append(c)
        elif c in "}])":
            depth -= 1
            cur.append(c)
        elif c == "+" and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def parse_term(t):
    m = TERM_RE.match(t)
    if not m or (m.group("fn") is None) != (m.group("range") is None):
        return None
    matchers = []
    rest = m.group("m") or ""
    while rest.strip():
        mm = MATCHER_RE.match(rest)
        if not mm:
            return None
        lit = mm.group(3)
        val = re.sub(r"\\(.)", lambda x: {"n": "\n"}.get(x.group(1), x.group(1)), lit[1:-1])
        matchers.append((mm.group(1), mm.group(2), val))
        rest = rest[mm.end():]
    return {"fn": m.group("fn"), "name": m.group("name"), "matchers": matchers}


def parse_simple(expr):
    """The forms the evaluator knows, or None: [terms] joined by '+'."""
    terms = [parse_term(t) for t in split_plus(expr)]
    return None if any(t is None for t in terms) else terms


def match_label(labels, label, op, val):
    have = labels.get(label, "")
    if op == "=":
        return have == val
    if op == "!=":
        return have != val
    found = re.fullmatch(val, have) is not None
    return found if op == "=~" else not found


def eval_term(term, fams):
    samples = fams.get(term["name"], {"samples": []})["samples"]
    out = {}
    for labels, v in samples:
        if all(match_label(labels, *m) for m in term["matchers"]):
            key = tuple(sorted(labels.items()))
            out[key] = 0.0 if term["fn"] else v
    return out


def evaluate(terms, flt, fams):
    """Expected series {label key: value} of `t1 + t2 + ... [OP n]` over the --once output."""
    res = eval_term(terms[0], fams)
    for t in terms[1:]:
        rhs = eval_term(t, fams)
        res = {k: v + rhs[k] for k, v in res.items() if k in rhs}
    if flt:
        op, n = flt
        ops = {"==": lambda a: a == n, "!=": lambda a: a != n, ">": lambda a: a > n,
               "<": lambda a: a < n, ">=": lambda a: a >= n, "<=": lambda a: a <= n}
        res = {k: v for k, v in res.items() if ops[op](v)}
    return res


def metric_names(expr):
    """Names of families an expression reads (a rough tokenizer; good for dashboards and
    for the mapping's expressions)."""
    s = re.sub(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'", '""', expr)
    s = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    names = []
    for m in re.finditer(NAME, s):
        w = m.group(0)
        after = s[m.end():].lstrip()
        if after.startswith("(") or w in ("and", "or", "unless", "bool", "offset", "NaN", "Inf", "inf", "nan"):
            continue
        if re.fullmatch(r"\d.*", w) or (m.start() > 0 and (s[m.start() - 1].isdigit() or s[m.start() - 1] == ".")):
            continue
        if w not in names:
            names.append(w)
    return names


# ---------------------------------------------------------------------------------------------
# Prometheus


class Prom:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def api(self, path, **params):
        q = ("?" + urllib.parse.urlencode(params)) if params else ""
        st, body = http_get(self.url + path + q, timeout=20)
        try:
            doc = json.loads(body)
        except ValueError:
            return None, "HTTP %d: %s" % (st, body.strip()[:300])
        if doc.get("status") != "success":
            return None, "HTTP %d: %s: %s" % (st, doc.get("errorType", "?"), doc.get("error", body[:300]))
        return doc["data"], None

    def query(self, q):
        """({label key: value}, duplicates list, error). Label keys ignore __name__/job/instance."""
        data, err = self.api("/api/v1/query", query=q)
        if err:
            return None, [], err
        if data["resultType"] == "scalar":
            return {(): float(data["result"][1])}, [], None
        if data["resultType"] != "vector":
            return None, [], "result type %s, want vector" % data["resultType"]
        out, dups = {}, []
        for s in data["result"]:
            key = tuple(sorted((k, v) for k, v in s["metric"].items() if k not in IGNORED_LABELS))
            if key in out:
                dups.append(fmt_labels(key) + " (job=%s)" % s["metric"].get("job", "-"))
            out[key] = float(s["value"][1])
        return out, dups, None

    def by_job(self, q):
        """{job: value} of a query whose result keeps the job label."""
        data, err = self.api("/api/v1/query", query=q)
        if err or data["resultType"] != "vector":
            return {}
        return {s["metric"].get("job", ""): float(s["value"][1]) for s in data["result"]}

    def scalar(self, q):
        res, _, err = self.query(q)
        if err or not res:
            return None
        return list(res.values())[0]


def rfc3339(ts):
    """Seconds since the epoch of Prometheus' RFC 3339 timestamps (nanoseconds, Z or offset)."""
    m = re.match(r"(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)(\.\d+)?(Z|[+-]\d\d:\d\d)", ts)
    if not m:
        return 0.0
    import calendar
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    t = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) + float(m.group(7) or 0)
    if m.group(8) != "Z":
        sign = 1 if m.group(8)[0] == "+" else -1
        t -= sign * (int(m.group(8)[1:3]) * 3600 + int(m.group(8)[4:6]) * 60)
    return t


# ---------------------------------------------------------------------------------------------
# the checks of one state


class Report:
    def __init__(self, state, verbose):
        self.state, self.verbose = state, verbose
        self.passed = self.failed = 0

    def ok(self, what):
        self.passed += 1
        if self.verbose:
            print("ok   [%s] %s" % (self.state, what))

    def fail(self, what, details=()):
        self.failed += 1
        print("FAIL [%s] %s" % (self.state, what))
        for d in details:
            print("       " + d)

    def note(self, what):
        print("note [%s] %s" % (self.state, what))


def diff_series(expected, got, dups):
    """Readable differences, or [] when equal."""
    lines = ["duplicate series after ignoring job/instance: " + d for d in dups]
    for k in sorted(set(expected) | set(got)):
        if k not in got:
            lines.append("expected %s %s, got no such series" % (fmt_labels(k), fmt_value(expected[k])))
        elif k not in expected:
            lines.append("unexpected series %s %s" % (fmt_labels(k), fmt_value(got[k])))
        elif not same_value(expected[k], got[k]):
            lines.append("%s: expected %s, got %s" % (fmt_labels(k), fmt_value(expected[k]), fmt_value(got[k])))
    return lines


def wait_targets(rep, prom, what, unparseable, deadline):
    """Wait until every scrape job has had >= 3 successful scrapes and its last one succeeded,
    except the jobs of endpoints Prometheus cannot parse: >= 3 scrapes, none successful."""
    details = []
    while time.time() < deadline:
        data, _ = prom.api("/api/v1/targets")
        targets = (data or {}).get("activeTargets", [])
        count = prom.by_job("count_over_time(up[1m])")
        good = prom.by_job("sum_over_time(up[1m])")
        last = prom.by_job("up")
        done, details = bool(targets), []
        for t in targets:
            job = t["labels"].get("job", "")
            bad = job_endpoint(job) in unparseable
            n, g = count.get(job, 0), good.get(job, 0)
            if (bad and (n < 3 or g > 0)) or (not bad and (g < 3 or last.get(job) != 1)):
                done = False
            details.append("job %s %s: %d scrapes, %d successful, health=%s lastError=%s"
                           % (job, t["scrapeUrl"], n, g, t["health"], t.get("lastError") or "-"))
        if done:
            rep.ok("%s: %d target(s) scraped 3 times" % (what, len(targets)))
            for t in targets:
                if job_endpoint(t["labels"].get("job", "")) in unparseable:
                    rep.note("%s: as expected, the scrape of %s fails: %s"
                             % (what, t["scrapeUrl"], t.get("lastError")))
            return True
        time.sleep(0.3)
    rep.fail("%s: the targets were not all scraped as expected in time" % what, details)
    return False


def job_endpoint(job):
    """The endpoint of an exported scrape job ("slurmctld-nodes" -> "nodes")."""
    return job[len("slurmctld-"):] if job.startswith("slurmctld-") else None


def wait_rules(rep, prom, since, deadline):
    """Wait until the rule groups were evaluated twice after `since` (all inputs present)."""
    while time.time() < deadline:
        data, _ = prom.api("/api/v1/rules")
        groups = (data or {}).get("groups", [])
        if groups and all(rfc3339(g.get("lastEvaluation", "")) > since + 1.0 for g in groups):
            return groups
        time.sleep(0.3)
    rep.fail("rules: not evaluated twice after the targets were ready")
    return None


def check_dashboards(rep, prom, via, targets, fams, unavailable, other=None):
    """Every dashboard target on one Prometheus. `other` (the second Prometheus) is used for
    expressions the evaluator does not understand. Returns how many queries answered as expected
    with at least one series (or empty for an explained reason), of how many."""
    answered = 0
    for dash, panel, raw in targets:
        expr = expand_variables(raw)
        where = "%s: %s panel '%s' query %r" % (via, dash, panel, raw)
        got, dups, err = prom.query(expr)
        if err:
            rep.fail(where + ": query failed", [err])
            continue
        body, flt = split_filter(expr)
        simple = parse_simple(body)
        names = [t["name"] for t in simple] if simple else metric_names(body)
        if simple is not None:
            expected = evaluate(simple, flt, fams)
            how = "compared with the shim's --once output"
        elif other is not None:
            expected, _, err2 = other.query(expr)
            how = "not understood by the small evaluator: compared with the other Prometheus"
            if err2:
                rep.fail(where + ": the other Prometheus failed the query", [err2])
                continue
        else:
            expected, how = got, "not compared (expression form not understood)"
        d = diff_series(expected, got, dups)
        if d:
            rep.fail(where + " (%s)" % how, d)
        else:
            rep.ok(where + " (%s): %d series" % (how, len(got)))
            # as through the shim: not emptied because an endpoint could not be scraped
            answered += not any(fams.get(n, {}).get("reason") for n in names)
        # without the trailing filter it must return something, unless explained
        sgot = got
        if flt:
            sgot, sdups, err = prom.query(body)
            if err:
                rep.fail(where + " without its filter: query failed", [err])
                continue
            if simple is not None:
                sd = diff_series(evaluate(simple, None, fams), sgot, sdups)
                if sd:
                    rep.fail(where + " without its filter %r (%s)" % (body, how), sd)
                    continue
        why = explain_empty(names, fams, unavailable)
        if sgot:
            marked = [n for n, _ in why if n in unavailable]
            if marked:
                rep.fail(where + ": returned series for a family marked unavailable: " + ", ".join(marked))
            else:
                rep.ok(where + ": at least one series without the filter")
        elif why:
            for name, reason in why:
                rep.note("%s: %r is empty: %s: %s" % (via, body, name, reason))
            rep.ok(where + ": empty, explained")
        else:
            rep.fail(where + ": no series without the filter %r, and the shim's output does not explain it" % body,
                     ["families read: %s" % ", ".join(names),
                      "in the shim's output: %s" % ", ".join("%s (%s)" % (n, "%d series" % len(fams[n]["samples"])
                                                                         if n in fams else "absent")
                                                              for n in names)])
    return answered, len(targets)


def explain_empty(names, fams, unavailable):
    """[(family, reason)] for the families that make a query legitimately empty."""
    out = []
    for n in names:
        if n in unavailable:
            out.append((n, unavailable[n]))
        elif n in fams and not fams[n]["samples"]:
            out.append((n, fams[n].get("reason", EMPTY_REASON)))
    return out


def check_rules(rep, prom, groups, fams):
    """Every recording rule: healthy, and its series equal the shim's family of the same name.
    PROM_CHECK_KNOWN ("row=reason" lines) lists rows whose difference is known and reported."""
    known = dict(l.split("=", 1) for l in os.environ.get("PROM_CHECK_KNOWN", "").splitlines() if "=" in l)
    records = []
    for g in groups:
        for r in g.get("rules", []):
            if r.get("type") != "recording":
                continue
            records.append(r["name"])
            if r.get("health") != "ok" or r.get("lastError"):
                rep.fail("rules: %s: health %s: %s" % (r["name"], r.get("health"), r.get("lastError")))
                continue
            got, dups, err = prom.query(r["name"])
            if err:
                rep.fail("rules: query %s failed" % r["name"], [err])
                continue
            # a family the shim leaves out (a row with no input, e.g. GPU rows on Slurm 25.11)
            # must give no series either
            samples = fams[r["name"]]["samples"] if r["name"] in fams else []
            expected = {tuple(sorted(lab.items())): v for lab, v in samples}
            d = diff_series(expected, got, dups)
            left_out = "" if r["name"] in fams else ", left out by the shim"
            if fams.get(r["name"], {}).get("reason"):
                left_out = ", empty: " + fams[r["name"]]["reason"]
                rep.note("rules: %s gives no series: %s" % (r["name"], fams[r["name"]]["reason"]))
            if r["name"] in known:
                rep.ok("rules: %s: known difference" % r["name"])
                if d:
                    rep.note("rules: %s: known engine difference (%s): %s" % (r["name"], known[r["name"]], "; ".join(d)))
                else:
                    rep.note("rules: %s now agrees with Prometheus: drop it from KNOWN in the test (%s)"
                             % (r["name"], known[r["name"]]))
            elif d:
                rep.fail("rules: %s differs from the shim's output%s (rule expr: %s)"
                         % (r["name"], left_out, r.get("query")), d)
            else:
                rep.ok("rules: %s equals the shim's output (%d series%s)" % (r["name"], len(got), left_out))
    served = sorted(n for n in fams if not n.startswith("slurm_exporter_shim_"))
    missing = sorted(set(served) - set(records))
    if missing:
        rep.fail("rules: no rule for families the shim serves: " + ", ".join(missing))
    else:
        rep.ok("rules: the %d rules cover the %d families the shim serves" % (len(records), len(served)))


def check_fake_stats(rep, url, what, needed, minimum):
    """The fake slurmctld saw >= minimum requests on each needed endpoint and none on the others."""
    st, body = http_get(url)
    counts = dict((l.split()[0], int(l.split()[1])) for l in body.splitlines() if len(l.split()) == 2)
    wrong = []
    for e in ENDPOINT_ORDER:
        n = counts.get(e, 0)
        if (e in needed and n < minimum) or (e not in needed and n):
            wrong.append("%s: %d requests, want %s" % (e, n, (">= %d" % minimum) if e in needed else "0"))
    if st != 200 or wrong:
        rep.fail("%s: fake slurmctld request counts" % what, wrong or [body])
    else:
        rep.ok("%s: fake slurmctld request counts (%s)" % (what, body.replace("\n", ", ").strip(", ")))


def mapping_rows(path):
    with open(path) as f:
        return json.load(f)["metrics"]


RECORD_PREFIX = "shim_source_"  # the shim's record of a scrape (docs/mapping.md): no endpoint, no rule


def row_endpoints(row):
    return ({endpoint_of(n) for n in metric_names(row["expr"]) if not n.startswith(RECORD_PREFIX)}
            if row.get("expr") else set())


def row_reads_record(row):
    return any(n.startswith(RECORD_PREFIX) for n in metric_names(row.get("expr") or ""))


def fams_for_rules(fams, rows, unparseable):
    """What the rules can give: the shim's families, emptied (with the reason) where a row reads
    an endpoint Prometheus cannot parse in this state; none of a row reading the shim's record of a
    scrape (--mapping.to-rules exports no rule of it)."""
    out = dict(fams)
    for r in rows:
        if row_reads_record(r):
            out.pop(r["name"], None)
            continue
        bad = sorted(row_endpoints(r) & unparseable)
        if r["name"] in fams and bad:
            out[r["name"]] = {"type": fams[r["name"]]["type"], "samples": [],
                              "reason": UNPARSEABLE_REASON % ", /metrics/".join(bad)}
    return out


def load_unavailable(mapping_path, rep, targets):
    """The mapping's unavailable rows, cross-checked with UNAVAILABLE for the dashboard families."""
    with open(mapping_path) as f:
        rows = json.load(f)["metrics"]
    marked = {r["name"]: r.get("note", "") for r in rows if r.get("fidelity") == "unavailable"}
    used = set()
    for _, _, e in targets:
        used.update(metric_names(expand_variables(e)))
    dash_marked = sorted(n for n in marked if n in used)
    listed = sorted(n for n in UNAVAILABLE if n in used)
    if dash_marked != listed:
        rep.fail("the dashboard families marked unavailable in %s (%s) differ from the test's list (%s)"
                 % (mapping_path, ", ".join(dash_marked) or "none", ", ".join(listed) or "none"))
    else:
        rep.ok("unavailable dashboard families: %s" % (", ".join(dash_marked) or "none"))
    out = {n: UNAVAILABLE.get(n, "marked unavailable in the mapping: " + marked[n]) for n in marked}
    return out


def state_main(args):
    import argparse
    p = argparse.ArgumentParser(prog="prom_check.py state")
    p.add_argument("--state", required=True)
    p.add_argument("--once", required=True, help="the shim's --once output for this state")
    p.add_argument("--mapping", required=True)
    p.add_argument("--prom-shim", required=True, help="URL of the Prometheus that scrapes the shim")
    p.add_argument("--prom-rules", help="URL of the Prometheus that scrapes slurmctld and runs rules.yml")
    p.add_argument("--fake-shim", help="URL of the fake slurmctld behind the shim")
    p.add_argument("--fake-rules", help="URL of the fake slurmctld behind the rules Prometheus")
    p.add_argument("--unparseable", "--down", action="append", default=[],
                   help="an endpoint that cannot be scraped in this run (parse error, injected fault)")
    p.add_argument("--timeout", type=float, default=90)
    p.add_argument("--verbose", action="store_true")
    p.add_argument("dashboards", nargs="*")
    a = p.parse_args(args)

    rep = Report(a.state, a.verbose or os.environ.get("VERBOSE") == "1")
    with open(a.once) as f:
        fams = parse_exposition(f.read())
    rows = mapping_rows(a.mapping)
    needed = set().union(*(row_endpoints(r) for r in rows))
    unparseable = set(a.unparseable)
    fams_rules = fams_for_rules(fams, rows, unparseable)
    targets = []
    for d in a.dashboards:
        targets += dashboard_targets(d)
    unavailable = load_unavailable(a.mapping, rep, targets)
    deadline = time.time() + a.timeout
    pa = Prom(a.prom_shim)
    pb = Prom(a.prom_rules) if a.prom_rules else None
    ready_a = wait_targets(rep, pa, "via shim", set(), deadline)
    ready_b = pb is not None and wait_targets(rep, pb, "via rules", unparseable, deadline)
    groups = wait_rules(rep, pb, time.time(), deadline) if ready_b else None
    # the other Prometheus answers expressions the evaluator does not know; not when some
    # endpoint cannot be scraped directly (the two must differ then)
    if ready_a:
        n = check_dashboards(rep, pa, "via shim", targets, fams, unavailable, pb if groups and not unparseable else None)
        if targets:
            rep.note("via shim: %d of %d dashboard queries answer as the shim's output" % n)
    if groups:
        n = check_dashboards(rep, pb, "via rules", targets, fams_rules, unavailable,
                             pa if ready_a and not unparseable else None)
        if targets:
            rep.note("via rules: %d of %d dashboard queries answer as through the shim" % n)
        check_rules(rep, pb, groups, fams_rules)
    if a.fake_shim:
        check_fake_stats(rep, a.fake_shim + "/_stats", "via shim", needed, 1)
    if a.fake_rules and pb is not None:
        check_fake_stats(rep, a.fake_rules + "/_stats", "via rules", needed, 3)
    print("%d passed, %d failed" % (rep.passed, rep.failed))
    return 1 if rep.failed else 0


# ---------------------------------------------------------------------------------------------
# the tables of docs/dashboards.md

ENDPOINT_ORDER = ["jobs", "nodes", "partitions", "scheduler", "jobs-users-accts"]


def endpoint_of(native):
    """docs/mapping.md, 'Where a native family comes from'."""
    if native.startswith("slurm_partition"):
        return "partitions"
    if native.startswith("slurm_node_") or native.startswith("slurm_nodes"):
        return "nodes"
    if native.startswith("slurm_user_") or native.startswith("slurm_account_"):
        return "jobs-users-accts"
    if native.startswith("slurm_jobs"):
        return "jobs"
    return "scheduler"


def tables(mapping_path, dashboards):
    with open(mapping_path) as f:
        rows = {r["name"]: r for r in json.load(f)["metrics"]}

    def natives(fam):
        r = rows.get(fam)
        return metric_names(r["expr"]) if r and r.get("expr") else []

    def endpoints(fams):
        eps = {endpoint_of(n) for f in fams for n in natives(f)}
        return ", ".join("`/metrics/%s`" % e for e in ENDPOINT_ORDER if e in eps) or "none"

    out = ["| dashboard | panel | queries | mapping rows | endpoints |", "|---|---|---|---|---|"]
    used = []
    for d in dashboards:
        panels = {}
        for dash, panel, expr in dashboard_targets(d):
            panels.setdefault(panel, []).append(expr)
        for panel, exprs in panels.items():
            fams = []
            for e in exprs:
                for n in metric_names(expand_variables(e)):
                    if n not in fams:
                        fams.append(n)
                    if n not in used:
                        used.append(n)
            rowtxt = ", ".join("`%s`%s" % (n, "" if n in rows else " (no row)") +
                               (" (unavailable)" if rows.get(n, {}).get("fidelity") == "unavailable" else "")
                               for n in fams)
            out.append("| %s | %s | %s | %s | %s |" % (
                os.path.basename(d), panel.strip().replace("|", "\\|"),
                "<br>".join("`%s`" % e.replace("|", "\\|") for e in exprs), rowtxt, endpoints(fams)))
    out += ["", "| mapping row | fidelity | native families read | endpoints |", "|---|---|---|---|"]
    for n in sorted(used):
        r = rows.get(n)
        if not r:
            out.append("| `%s` | no row | | |" % n)
            continue
        nat = natives(n)
        out.append("| `%s` | %s | %s | %s |" % (n, r["fidelity"], ", ".join("`%s`" % x for x in nat) or "none",
                                               endpoints([n])))
    return "\n".join(out) + "\n"


BEGIN = "<!-- BEGIN generated by tests/prom_check.py table -->\n"
END = "<!-- END generated -->\n"


def table_main(args):
    """table MAPPING DASH...: print; table --check FILE ...: compare with FILE's generated part;
    table --write FILE ...: replace FILE's generated part."""
    mode = path = None
    if args and args[0] in ("--check", "--write"):
        mode, path, args = args[0], args[1], args[2:]
    text = tables(args[0], args[1:])
    if mode is None:
        sys.stdout.write(text)
        return 0
    with open(path) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        print("%s: no generated section (%s)" % (path, BEGIN.strip()))
        return 1
    head, rest = doc.split(BEGIN, 1)
    current, tail = rest.split(END, 1)
    if mode == "--write":
        with open(path, "w") as f:
            f.write(head + BEGIN + text + END + tail)
        return 0
    if current != text:
        print("%s: the generated tables are out of date; regenerate with:" % path)
        print("  python3 tests/prom_check.py table --write %s %s" % (path, " ".join(args)))
        return 1
    return 0


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "ports":
        print(" ".join(str(p) for p in free_ports(int(args[0]))))
        return 0
    if cmd == "get":
        st, body = http_get(args[0])
        sys.stdout.write(body)
        return 0 if st == 200 else 1
    if cmd == "wait-http":
        return wait_http(args[0], float(args[1]), int(args[2]) if len(args) > 2 else None)
    if cmd == "wait-prom":
        url, data, seconds, pid = args[0].rstrip("/"), args[1], float(args[2]), int(args[3])
        rc = wait_http(url + "/-/ready", seconds, pid)
        if rc:
            return rc

        def ours(body):
            try:
                return json.loads(body)["data"].get("storage.tsdb.path") == data
            except (ValueError, KeyError, AttributeError):
                return False
        return wait_http(url + "/api/v1/status/flags", 10, pid, ours)
    if cmd == "exprs":
        for d in args:
            for dash, panel, expr in dashboard_targets(d):
                print("%s\t%s\t%s" % (dash, panel, expr))
        return 0
    if cmd == "table":
        return table_main(args)
    if cmd == "state":
        return state_main(args)
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
