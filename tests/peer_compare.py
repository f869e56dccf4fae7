#!/usr/bin/env python3
"""peer_compare.py MAPPING PEER_OUTPUT SERVED [EXCLUDED]: every exact row of MAPPING (its first
"prefer" alternative's fidelity) has the same series in SERVED as in PEER_OUTPUT (label sets and
values; an empty label value is no label, as Prometheus reads it; a row whose note says the last bit of
a sum may differ: within 1e-12 relative). EXCLUDED, a regex (POSIX-style,
anchored at both ends, as --mapping.exclude): the families the peer's collectors turned off would not
print: each must be absent from SERVED and is not compared. Prints each family that differs and,
last, "N exact rows compared, M differ"; exits 1 when one differs or none was compared."""
import json
import re
import sys


def series(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line.strip())
            if not m:
                continue
            labels = tuple(sorted((k, v) for k, v in
                                  re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or "") if v))
            out.setdefault(m.group(1), {})[labels] = float(m.group(4))
    return out


def agree(a, b, note):
    """Two families' series equal; a row whose note says the last bit of a sum may differ (the peer
    adds in an order of its own), equal within 1e-12 relative."""
    if a == b:
        return True
    if "the last bit of a sum may differ" not in note or a.keys() != b.keys():
        return False
    return all(abs(a[k] - b[k]) <= 1e-12 * max(abs(a[k]), abs(b[k])) for k in a)


def main():
    with open(sys.argv[1]) as f:
        rows = json.load(f)["metrics"]
    peer, shim = series(sys.argv[2]), series(sys.argv[3])
    excluded = re.compile(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None
    bad = n = 0
    for r in rows:
        if excluded and excluded.fullmatch(r["name"]):
            if r["name"] in shim:
                print("excluded but served:", r["name"])
                bad += 1
            continue
        form = (r.get("prefer") or [r])[0]
        if form["fidelity"] != "exact":
            continue
        n += 1
        if not agree(peer.get(r["name"], {}), shim.get(r["name"], {}), form.get("note", "")):
            print("differs:", r["name"], peer.get(r["name"]), shim.get(r["name"]))
            bad += 1
    print(f"{n} exact rows compared, {bad} differ")
    return 1 if bad or not n else 0


if __name__ == "__main__":
    sys.exit(main())
