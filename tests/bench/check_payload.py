#!/usr/bin/env python3
"""Check a payload directory written by gen_payload.py against the captured fixture it copies:
same HELP/TYPE lines in the same order on every endpoint, label style, one sample per node /
partition / user / account (+ one unlabelled account sample), integer values, and the
cross-family invariants (cpus_alloc <= cpus_effective <= cpus, sums agree between endpoints).

usage: check_payload.py DIR [--template DIR]      exit 0 when every check passes
"""

import argparse
import os
import re
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TEMPLATE = os.path.join(HERE, "..", "fixtures", "slurm-25.11", "02-busy-mix")
ENDPOINTS = ["jobs", "nodes", "partitions", "scheduler", "jobs-users-accts"]
SAMPLE = re.compile(r'^([a-z_]+)(?:\{([a-z]+)="([^"]*)"\})? (-?[0-9]+)$')

problems = []


def bad(msg):
    problems.append(msg)


def read(path):
    with open(path, encoding="utf-8") as f:
        data = f.read()
    if not data.endswith("\n"):
        bad("%s: no final newline" % path)
    return data.split("\n")[:-1]


def parse(lines, where):
    """-> header lines, OrderedDict family -> [(label, value, int)]"""
    headers, fams, cur = [], OrderedDict(), None
    for i, line in enumerate(lines, 1):
        if line.startswith("#"):
            headers.append(line)
            if line.startswith("# HELP "):
                cur = line.split(" ", 3)[2]
                fams[cur] = []
            continue
        m = SAMPLE.match(line)
        if not m:
            bad("%s:%d: not a slurmctld-style sample: %r" % (where, i, line))
            continue
        if m.group(1) != cur:
            bad("%s:%d: sample of %s under the HELP of %s" % (where, i, m.group(1), cur))
        fams[cur].append((m.group(2), m.group(3), int(m.group(4))))
    return headers, fams


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--template", default=DEFAULT_TEMPLATE)
    a = ap.parse_args()
    got = {}
    for ep in ENDPOINTS:
        th, _ = parse(read(os.path.join(a.template, "metrics_%s.txt" % ep)), "template " + ep)
        gh, gf = parse(read(os.path.join(a.dir, "metrics_%s.txt" % ep)), ep)
        if th != gh:
            bad("%s: HELP/TYPE lines differ from the template (%d vs %d lines)" % (ep, len(gh), len(th)))
        got[ep] = gf

    def values(ep, fam):
        return [v for _, _, v in got[ep][fam]]

    def keys(ep, fam):
        return [(l, k) for l, k, _ in got[ep][fam]]

    def scalar(ep, fam):
        s = got[ep][fam]
        if len(s) != 1 or s[0][0] is not None:
            bad("%s %s: want one unlabelled sample" % (ep, fam))
        return s[0][2]

    # nodes: every per-node family has the same node list, in the same order
    nodefams = [f for f in got["nodes"] if f.startswith("slurm_node_")]
    ref = keys("nodes", nodefams[0])
    nn = len(ref)
    for f in nodefams:
        if keys("nodes", f) != ref or any(l != "node" for l, _ in ref):
            bad("nodes %s: node list differs" % f)
    if len(set(ref)) != nn:
        bad("nodes: duplicate node names")
    if scalar("nodes", "slurm_nodes") != nn:
        bad("slurm_nodes != number of nodes")
    node = {f: values("nodes", f) for f in nodefams}
    for i in range(nn):
        c, e, al, idle = (node["slurm_node_cpus"][i], node["slurm_node_cpus_effective"][i],
                          node["slurm_node_cpus_alloc"][i], node["slurm_node_cpus_idle"][i])
        m, me, ma = (node["slurm_node_memory_bytes"][i], node["slurm_node_memory_effective_bytes"][i],
                     node["slurm_node_memory_alloc_bytes"][i])
        if not (0 <= al <= e <= c and idle == e - al and 0 <= ma <= me <= m):
            bad("node %s: inconsistent cpus/memory" % ref[i][1])
            break
    states = sum(scalar("nodes", "slurm_nodes_" + s) for s in ("alloc", "mixed", "idle", "down"))
    if states != nn:
        bad("alloc+mixed+idle+down = %d, not %d nodes" % (states, nn))
    if scalar("nodes", "slurm_nodes_drain") != scalar("nodes", "slurm_nodes_drained") + scalar("nodes", "slurm_nodes_draining"):
        bad("drain != drained + draining")

    # jobs vs nodes vs users vs accounts
    jobs_cpus = scalar("jobs", "slurm_jobs_cpus_alloc")
    if sum(node["slurm_node_cpus_alloc"]) != jobs_cpus:
        bad("sum(node cpus_alloc) %d != slurm_jobs_cpus_alloc %d" % (sum(node["slurm_node_cpus_alloc"]), jobs_cpus))
    if sum(node["slurm_node_memory_alloc_bytes"]) != scalar("jobs", "slurm_jobs_memory_alloc"):
        bad("sum(node memory_alloc) != slurm_jobs_memory_alloc")
    ua = got["jobs-users-accts"]
    for prefix, label in (("slurm_user_jobs", "username"), ("slurm_account_jobs", "account")):
        fams = [f for f in ua if f.startswith(prefix)]
        r = keys("jobs-users-accts", fams[0])
        for f in fams:
            if keys("jobs-users-accts", f) != r:
                bad("%s: label list differs" % f)
        unl = sum(1 for l, _ in r if l is None)
        if any(l not in (None, label) for l, _ in r) or (prefix == "slurm_user_jobs" and unl) or \
           (prefix == "slurm_account_jobs" and unl != 1):
            bad("%s: label style (%d unlabelled)" % (prefix, unl))
        for f in fams:
            jf = "slurm_jobs" + f[len(prefix):]
            if sum(values("jobs-users-accts", f)) != scalar("jobs", jf):
                bad("sum(%s) != %s" % (f, jf))
    # partitions
    pf = [f for f in got["partitions"] if f.startswith("slurm_partition_")]
    pr = keys("partitions", pf[0])
    for f in pf:
        if keys("partitions", f) != pr:
            bad("%s: partition list differs" % f)
    if scalar("partitions", "slurm_partitions") != len(pr):
        bad("slurm_partitions != number of partitions")
    pn = values("partitions", "slurm_partition_nodes")
    if max(pn) != nn or sum(pn) <= nn:
        bad("partitions: want one partition with every node and some overlap")
    for a_, b_ in (("slurm_partition_nodes_cpus_alloc", "slurm_partition_nodes_cpus_efctv"),
                   ("slurm_partition_nodes_cpus_efctv", "slurm_partition_cpus"),
                   ("slurm_partition_nodes_mem_alloc", "slurm_partition_nodes_mem_tot")):
        if any(x > y for x, y in zip(values("partitions", a_), values("partitions", b_))):
            bad("partitions: %s > %s" % (a_, b_))
    # a partition holding every node sums every node's figures, as slurmctld's statistics.c does
    # (cpus_idle whatever the node's state)
    for k, nodes_in in enumerate(pn):
        if nodes_in != nn:
            continue
        for pfam, nfam in (("slurm_partition_nodes_cpus_alloc", "slurm_node_cpus_alloc"),
                           ("slurm_partition_nodes_cpus_idle", "slurm_node_cpus_idle"),
                           ("slurm_partition_nodes_cpus_efctv", "slurm_node_cpus_effective")):
            if values("partitions", pfam)[k] != sum(node[nfam]):
                bad("partition %s holds every node: %s %d != sum(%s) %d" % (
                    pr[k][1], pfam, values("partitions", pfam)[k], nfam, sum(node[nfam])))
    for ep in ENDPOINTS:
        n = sum(len(v) for v in got[ep].values())
        print("%-17s %3d families %8d samples" % (ep, len(got[ep]), n))
    print("%d nodes, %d partitions, %d users, %d accounts" % (
        nn, len(pr), len(keys("jobs-users-accts", "slurm_user_jobs")),
        len(keys("jobs-users-accts", "slurm_account_jobs")) - 1))
    for p in problems:
        print("PROBLEM:", p)
    print("OK" if not problems else "%d problem(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
