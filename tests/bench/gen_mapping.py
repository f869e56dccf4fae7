#!/usr/bin/env python3
"""gen_mapping.py DIR: write mapping files just under the loader's 4 MiB cap (MAPPING_MAX_BYTES),
each a shape that once made loading quadratic or that is the worst case now (docs/performance.md, "Loading the mapping"), for timing
`slurm-exporter-shim --check-mapping` (docs/performance.md, "Loading the mapping"). Deterministic.

  rows.json      28,000 ordinary rows: two aggregations over selectors with a label matcher
  tiny.json      50,000 minimal rows (every row name checked against the others)
  chains.json    3,400 rows, each a chain of 127 aggregations (at the depth limit), overlapping
  dense.json     12,600 rows of a+a+...+a (128 terms): the most nodes 4 MiB can hold (3.2 million)
  balanced.json  one row: a balanced tree of 131,072 equal sum(x), 17 deep (1.4 MB)
  matchers.json  one row: a selector with 280,000 label matchers
"""
import json, os, sys

LIMIT = 4 * 1024 * 1024 - 1000

def write(path, exprs, compact=False):
    rows = [{"name": "r%d" % i, "help": "h", "type": "gauge", "fidelity": "exact", "expr": e} for i, e in enumerate(exprs)]
    text = json.dumps({"metrics": rows}, separators=(',', ':') if compact else None)
    assert len(text) <= 4 * 1024 * 1024, path
    with open(path, 'w') as f:
        f.write(text)

def fill(make, per_row_overhead):
    out, size, i = [], 0, 0
    while True:
        e = make(i)
        if size + len(e) + per_row_overhead > LIMIT:
            return out
        out.append(e)
        size += len(e) + per_row_overhead
        i += 1

def balanced(d):
    return "sum(x)" if d == 0 else "(" + balanced(d - 1) + " + " + balanced(d - 1) + ")"

def main(d):
    os.makedirs(d, exist_ok=True)
    write(os.path.join(d, "rows.json"), fill(lambda i: 'sum(slurm_node_cpus{node="n%d"}) + sum(slurm_node_cpus_alloc)' % i, 90))
    write(os.path.join(d, "tiny.json"), fill(lambda i: "x", 84))
    write(os.path.join(d, "chains.json"), fill(lambda i: " + ".join("sum(m%d)" % ((i + k) % 1000) for k in range(127)), 90))
    write(os.path.join(d, "dense.json"), fill(lambda i: "+".join(["a"] * 128), 75), compact=True)
    write(os.path.join(d, "balanced.json"), [balanced(17)])
    n = 280000
    write(os.path.join(d, "matchers.json"), ["count(x{" + ", ".join('l%d="v"' % i for i in range(n)) + "})"])

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/bench/out/mappings")
