#!/usr/bin/env python3
"""Extract every PromQL query of a folder of Grafana dashboards into a JSON fixture (Python 3
standard library only). The dashboards themselves are not kept: tests/test_prometheus_peers.sh
evaluates the fixture's queries in a real Prometheus.

Usage:
  tests/dashboard-queries.py [--repository URL --tag TAG --commit SHA --folder PATH --license SPDX]
                             DIR_OR_FILE... > fixture.json

Each query is one entry:
  * a panel target with an expr: {"dashboard", "panel", "expr", "query"};
  * a template variable of type "query" with label_values(): {"dashboard", "variable", "expr",
    "query", "label", "regex"}, its query being `group by (LABEL) (SELECTOR)` (the label's values
    are that answer's label values; Grafana then keeps those that the variable's regex matches).
"expr" is the dashboard's text; "query" is what the test sends, with the variables substituted as
tests/prom_check.py does for #4323 (expand_variables: $__interval, $__rate_interval and $__range
become 5m, any other variable `.*`), except that a variable with "All" and an allValue gets its
allValue (what the dashboard's default "All" sends: `.+` in SckyzO's).
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prom_check  # noqa: E402 (dashboard_targets, expand_variables: the same reading as for #4323)

LABEL_VALUES_RE = re.compile(r"^\s*label_values\s*\(\s*(?:(?P<sel>.*\S)\s*,\s*)?(?P<label>[a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$", re.S)


def variables(dashboard):
    """The template variables: [(name, definition)]."""
    return [(v.get("name"), v) for v in (dashboard.get("templating") or {}).get("list") or []
            if isinstance(v, dict) and v.get("name")]


def substitute(expr, variables_list):
    """The dashboard's variables with their allValue (where "All" has one), then prom_check's reading."""
    for name, v in variables_list:
        if v.get("includeAll") and v.get("allValue"):
            value = v["allValue"]
            pat = r"\$\{%s(?::\w+)?\}|\[\[%s(?::\w+)?\]\]|\$%s\b" % ((re.escape(name),) * 3)
            expr = re.sub(pat, lambda _m, val=value: val, expr)
    return prom_check.expand_variables(expr)


def variable_query(v):
    q = v.get("query")
    if isinstance(q, dict):
        q = q.get("query")
    return q if isinstance(q, str) else ""


def extract(path):
    with open(path) as f:
        dashboard = json.load(f)
    base = os.path.basename(path)
    vlist = variables(dashboard)
    out = []
    for name, v in vlist:
        if v.get("type") != "query":
            continue
        raw = variable_query(v)
        m = LABEL_VALUES_RE.match(raw)
        entry = {"dashboard": base, "variable": name, "expr": raw}
        if not m:
            entry.update({"query": None, "note": "not label_values(): not evaluated"})
        else:
            sel = substitute(m.group("sel") or '{%s!=""}' % m.group("label"), vlist)
            entry.update({"query": "group by (%s) (%s)" % (m.group("label"), sel), "label": m.group("label"),
                          "regex": v.get("regex") or ""})
        out.append(entry)
    for dash, panel, raw in prom_check.dashboard_targets(path):
        out.append({"dashboard": dash, "panel": panel, "expr": raw, "query": substitute(raw, vlist)})
    return out


def main(argv):
    p = argparse.ArgumentParser(prog="dashboard-queries.py", description=__doc__.split("\n\n")[0])
    for k in ("repository", "tag", "commit", "folder", "license"):
        p.add_argument("--" + k, default="")
    p.add_argument("paths", nargs="+", help="dashboard JSON files or folders holding them")
    a = p.parse_args(argv)
    files = []
    for d in a.paths:
        if os.path.isdir(d):
            files += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".json"))
        else:
            files.append(d)
    if not files:
        sys.stderr.write("dashboard-queries.py: no dashboard (*.json) in %s\n" % " ".join(a.paths))
        return 1
    queries = []
    for f in files:
        try:
            queries += extract(f)
        except (OSError, ValueError) as e:
            sys.stderr.write("dashboard-queries.py: %s: %s\n" % (f, e))
            return 1
    doc = {
        "source": {k: getattr(a, k) for k in ("repository", "tag", "commit", "folder", "license")},
        "generated_by": "tests/dashboard-queries.py",
        "substitution": "variables with All and an allValue: the allValue; other variables: .*; "
                        "$__interval, $__rate_interval, $__range: 5m; label_values(SELECTOR, LABEL): "
                        "group by (LABEL) (SELECTOR)",
        "dashboards": [os.path.basename(f) for f in files],
        "queries": queries,
    }
    # one query a line (small, and a new revision's diff shows the queries that changed)
    head = json.dumps({k: v for k, v in doc.items() if k != "queries"}, indent=1, ensure_ascii=False)
    sys.stdout.write(head[:-2] + ',\n "queries": [\n')
    sys.stdout.write(",\n".join("  " + json.dumps(q, ensure_ascii=False) for q in queries))
    sys.stdout.write("\n ]\n}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
