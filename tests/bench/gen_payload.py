#!/usr/bin/env python3
"""Write a synthetic but self-consistent Slurm 25.11 native metrics payload for a cluster of a
given size, in slurmctld's exact text format, as the five files the shim replays and
fake_slurmctld serves:

    DIR/metrics_jobs.txt  metrics_nodes.txt  metrics_partitions.txt
    DIR/metrics_scheduler.txt  metrics_jobs-users-accts.txt

Family names, HELP/TYPE lines, family order and label style are copied at run time from a real
capture (default: tests/fixtures/slurm-25.11/02-busy-mix), so they cannot drift from it. Only the
samples are synthetic:

  * per-node families: one sample per node, in node-table order (node="cn00001", ...);
  * per-partition families: one sample per partition, in config order; partitions overlap
    (batch holds every node, debug the first 1%, gpu the last 10%, bigmem 5%, and "lab"
    partitions each cover two neighbouring blocks of nodes);
  * per-user / per-account families: one sample per user / account in order of first appearance
    in the job list, plus one unlabelled sample for jobs without an account, where the first
    such job appears (as slurmctld writes it);
  * scheduler families: one unlabelled sample each; counters scaled with the job counts.

The numbers come from one simulated cluster state, so they agree with each other: every node's
cpus_alloc <= cpus_effective <= cpus, cpus_idle = cpus_effective - cpus_alloc, memory likewise;
running jobs are packed onto nodes, so sum(node cpus_alloc) == slurm_jobs_cpus_alloc ==
sum over users of slurm_user_jobs_cpus_alloc; partition node sums are sums over their nodes;
global node state counts are counts over nodes. Values are integers (memory in MB, as Slurm
writes it). Everything derives from one fixed seed: the same arguments give the same bytes.

Default sizes: users = nodes/2, accounts = nodes/10 (5,000 and 1,000 at 10,000 nodes).

usage: gen_payload.py --nodes N --out DIR [--users U] [--accounts A] [--partitions P]
                      [--seed S] [--template DIR]
"""

import argparse
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TEMPLATE = os.path.join(HERE, "..", "fixtures", "slurm-25.11", "02-busy-mix")
ENDPOINTS = ["jobs", "nodes", "partitions", "scheduler", "jobs-users-accts"]

# Job states as the per-user/account/partition/global "jobs_<state>" families name them.
JOB_STATE_FIELDS = [
    "bootfail", "cancelled", "completed", "completing", "configuring", "deadline", "expediting",
    "failed", "fed_requeued", "hold", "node_failed", "outofmemory", "pending", "powerup_node",
    "preempted", "requeued", "resizing", "revoked", "running", "signaling", "stageout",
    "suspended", "timeout",
]
FINISHED_STATES = {"completed", "failed", "cancelled", "timeout", "outofmemory", "node_failed",
                   "preempted", "bootfail", "deadline"}


def read_template(path):
    """Per endpoint: [(family, help_line, type_line)] in file order."""
    out = {}
    for ep in ENDPOINTS:
        fams = []
        with open(os.path.join(path, "metrics_%s.txt" % ep), encoding="utf-8") as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("# HELP "):
                name = line.split(" ", 3)[2]
                t = lines[i + 1]
                if not t.startswith("# TYPE %s " % name):
                    sys.exit("template %s: HELP of %s not followed by its TYPE" % (ep, name))
                fams.append((name, line, t))
        if not fams:
            sys.exit("template %s: no families" % ep)
        out[ep] = fams
    return out


def scheduler_template_values(path):
    vals = {}
    with open(os.path.join(path, "metrics_scheduler.txt"), encoding="utf-8") as f:
        for line in f:
            if line and not line.startswith("#"):
                name, v = line.split()
                vals[name] = int(v)
    return vals


class Node:
    __slots__ = ("name", "cpus", "eff", "alloc", "mem", "mem_eff", "mem_alloc", "mem_free",
                 "base", "flags", "parts")


class Job:
    __slots__ = ("id", "user", "account", "part", "state", "hold", "cpus", "mem", "nnodes",
                 "started", "min_nodes", "max_nodes", "completing", "requeued")

    def __init__(self):
        self.id = self.user = self.account = self.part = self.state = None
        self.cpus = self.mem = self.nnodes = self.min_nodes = self.max_nodes = 0
        self.hold = self.started = self.completing = self.requeued = False


def zipf_weights(n, s=0.9):
    return [1.0 / (k + 1) ** s for k in range(n)]


SURNAMES = ["smith", "jones", "garcia", "miller", "davis", "lopez", "wilson", "anderson", "thomas",
            "taylor", "moore", "jackson", "martin", "lee", "perez", "thompson", "white", "harris",
            "sanchez", "clark", "ramirez", "lewis", "robinson", "walker", "young", "allen", "king",
            "wright", "scott", "torres", "nguyen", "hill", "flores", "green", "adams", "nelson",
            "baker", "hall", "rivera", "campbell", "mitchell", "carter", "roberts", "mueller",
            "schmidt", "schneider", "fischer", "weber", "meyer", "wagner", "becker", "schulz",
            "hoffmann", "koch", "rossi", "russo", "ferrari", "esposito", "bianchi", "romano",
            "dubois", "durand", "leroy", "moreau", "laurent", "simon", "michel", "tanaka", "suzuki",
            "sato", "watanabe", "ito", "yamamoto", "nakamura", "kobayashi", "wang", "li", "zhang",
            "liu", "chen", "yang", "huang", "zhao", "wu", "zhou", "kumar", "singh", "sharma",
            "patel", "gupta", "kowalski", "nowak", "novak", "horvat", "silva", "santos", "oliveira"]
FIELDS = ["phys", "chem", "bio", "astro", "geo", "climate", "math", "cs", "eng", "med", "neuro",
          "mat", "hep", "cfd", "genomics", "econ", "ml", "quantum", "energy", "ocean"]


def make_users(rng, n):
    seen, out = set(), []
    while len(out) < n:
        base = rng.choice("abcdefghijklmnopqrstuvwxyz") + rng.choice(SURNAMES)
        name = base
        k = 1
        while name in seen:
            k += 1
            name = "%s%d" % (base, k)
        seen.add(name)
        out.append(name)
    return out


def make_accounts(rng, n):
    out = []
    for i in range(n):
        f = FIELDS[i % len(FIELDS)]
        out.append("%s-%s%04d" % (f, rng.choice(["lab", "grp", "proj"]), i))
    return out


def simulate(args):
    rng = random.Random(args.seed)
    N = args.nodes
    width = max(5, len(str(N)))

    # ---- partitions (overlapping) ----
    parts = []   # (name, [node indexes])
    parts.append(("batch", list(range(N))))
    parts.append(("debug", list(range(max(1, N // 100)))))
    ngpu = max(1, N // 10)
    parts.append(("gpu", list(range(N - ngpu, N))))
    nbig = max(1, N // 20)
    big0 = (N - ngpu - nbig) // 2
    parts.append(("bigmem", list(range(max(0, big0), max(0, big0) + nbig))))
    nlab = max(0, args.partitions - len(parts))
    for k in range(nlab):
        lo = k * N // nlab
        hi = min(N, (k + 2) * N // nlab)   # two blocks: every node is in two lab partitions
        parts.append(("lab%03d" % k, list(range(lo, hi))))
    parts = parts[:max(3, args.partitions)]

    # ---- nodes ----
    nodes = []
    gpu_set = set(parts[2][1])
    big_set = set(parts[3][1]) if len(parts) > 3 else set()
    for i in range(N):
        n = Node()
        n.name = "cn%0*d" % (width, i + 1)
        if i in gpu_set:
            n.cpus, n.mem = 64, 512000
        elif i in big_set:
            n.cpus, n.mem = 128, 1024000
        else:
            n.cpus, n.mem = rng.choice([(48, 192000), (64, 256000), (64, 256000)])
        corespec = rng.random() < 0.1
        n.eff = n.cpus - (2 if corespec else 0)
        n.mem_eff = n.mem - (8000 if corespec else 0)
        r = rng.random()
        n.flags = set()
        if r < 0.55:
            n.base = "alloc"
        elif r < 0.80:
            n.base = "mixed"
        elif r < 0.92:
            n.base = "idle"
        elif r < 0.94:
            n.base = "down"
            n.flags.add("noresp" if rng.random() < 0.7 else "fail")
        elif r < 0.96:
            n.base = "idle"
            n.flags.add("drain")            # drained
        elif r < 0.975:
            n.base = rng.choice(["alloc", "mixed"])
            n.flags.add("drain")            # draining
        elif r < 0.985:
            n.base = "idle"
            n.flags.add("powered_down")
        else:
            n.base = "idle"
            n.flags.add(rng.choice(["maint", "resv", "reboot_req", "resv"]))
        if n.base in ("alloc", "mixed"):
            if rng.random() < 0.01:
                n.flags.add("completing")
            if rng.random() < 0.01:
                n.flags.add("resv")
        if n.base == "alloc":
            n.alloc = n.eff
        elif n.base == "mixed":
            n.alloc = rng.randint(1, n.eff - 1)
        else:
            n.alloc = 0
        n.mem_alloc = 0
        n.parts = []
        nodes.append(n)
    for pi, (_, members) in enumerate(parts):
        for i in members:
            nodes[i].parts.append(pi)

    # ---- running jobs, packed onto the allocated CPUs ----
    jobs = []
    i = 0
    while i < N:
        n = nodes[i]
        if n.alloc == 0:
            i += 1
            continue
        # a multi-node job over a run of fully allocated nodes
        if n.alloc == n.eff and rng.random() < 0.3:
            k = 1
            want = rng.choice([2, 2, 4, 4, 8, 16, 32])
            while k < want and i + k < N and nodes[i + k].alloc == nodes[i + k].eff and nodes[i + k].alloc > 0:
                k += 1
            if k > 1:
                common = set(n.parts)
                for j in range(i, i + k):
                    common &= set(nodes[j].parts)
                j0 = Job()
                j0.part = rng.choice(sorted(common))
                j0.cpus, j0.mem, j0.nnodes = 0, 0, k
                for j in range(i, i + k):
                    m = nodes[j]
                    mem = int(m.mem_eff * rng.uniform(0.3, 0.9)) // 100 * 100
                    m.mem_alloc += mem
                    j0.cpus += m.alloc
                    j0.mem += mem
                j0.state = "running"
                jobs.append(j0)
                i += k
                continue
        left = n.alloc
        while left > 0:
            c = min(left, rng.choice([1, 1, 2, 4, 4, 8, 8, 16, 16, 32, 64]))
            left -= c
            j = Job()
            j.part = rng.choice(n.parts)
            j.cpus, j.nnodes = c, 1
            j.mem = int(n.mem_eff * c / n.eff * rng.uniform(0.2, 0.95)) // 100 * 100
            n.mem_alloc += j.mem
            j.state = "running"
            jobs.append(j)
        i += 1
    for n in nodes:
        if n.base == "down":
            n.mem_free = 0
        else:
            n.mem_free = max(0, int((n.mem - n.mem_alloc) * rng.uniform(0.6, 0.98)) - 2000)

    nrun = len(jobs)
    running_jobs = list(jobs)
    for j in running_jobs:
        j.started = True
        r = rng.random()
        if r < 0.005:
            j.state = "suspended"      # still holds its CPUs
    # pending, finished and a few other states
    npend = int(nrun * 0.4) + 1
    nfin = int(nrun * 0.25) + 1
    for _ in range(npend):
        j = Job()
        j.state = "pending"
        j.part = rng.randrange(len(parts))
        j.nnodes = 0
        j.min_nodes = rng.choice([1, 1, 1, 1, 2, 4, 8, 16])
        j.max_nodes = j.min_nodes * rng.choice([1, 1, 2])
        j.cpus = j.min_nodes * rng.choice([1, 4, 16, 48])
        j.mem = 0
        j.started = False
        j.hold = rng.random() < 0.15
        j.requeued = rng.random() < 0.01
        jobs.append(j)
    finished = [("completed", 70), ("failed", 12), ("cancelled", 12), ("timeout", 4),
                ("outofmemory", 1), ("node_failed", 0.5), ("preempted", 0.5)]
    for _ in range(nfin):
        j = Job()
        j.state = rng.choices([s for s, _ in finished], [w for _, w in finished])[0]
        j.part = rng.randrange(len(parts))
        j.nnodes = 0
        j.cpus = rng.choice([1, 2, 4, 8, 16, 32])
        j.mem = 0
        j.started = not (j.state == "cancelled" and rng.random() < 0.5)
        j.completing = rng.random() < 0.02
        jobs.append(j)
    # ---- users and accounts ----
    users = make_users(rng, args.users)
    accounts = make_accounts(rng, args.accounts)
    while len(jobs) < len(users):               # every user has at least one job
        j = Job()
        j.state, j.part, j.cpus, j.min_nodes, j.max_nodes = "pending", 0, 1, 1, 1
        jobs.append(j)
    user_acct = [i % len(accounts) for i in range(len(users))]
    rng.shuffle(user_acct)
    user_acct2 = [rng.randrange(len(accounts)) for _ in users]
    rng.shuffle(jobs)                           # job-list order: users appear in a mixed order
    cum, acc = [], 0.0
    for w in zipf_weights(len(users)):
        acc += w
        cum.append(acc)
    perm = list(range(len(users)))
    rng.shuffle(perm)
    picks = rng.choices(range(len(users)), cum_weights=cum, k=max(0, len(jobs) - len(users)))
    for k, j in enumerate(jobs):
        j.id = k + 1
        if k < len(users):
            j.user = perm[k]
            j.account = user_acct[j.user]
        else:
            j.user = perm[picks[k - len(users)]]
            r = rng.random()
            if r < 0.015:
                j.account = None                # no account: an unlabelled sample
            elif r < 0.15:
                j.account = user_acct2[j.user]
            else:
                j.account = user_acct[j.user]
    # users' first jobs all carry an account; make sure at least one job has none, as on the
    # captured cluster
    if all(j.account is not None for j in jobs):
        jobs[-1].account = None
    return rng, nodes, parts, jobs, users, accounts


def job_counts(js):
    """The jobs_<x> fields over a set of job records (a user's, an account's, everyone's)."""
    c = dict.fromkeys(JOB_STATE_FIELDS, 0)
    c.update(jobs=0, finished=0, started=0, cpus_alloc=0, memory_alloc=0, nodes_alloc=0)
    for j in js:
        c["jobs"] += 1
        st = j.state
        c[st] += 1
        if st in FINISHED_STATES:
            c["finished"] += 1
        if j.completing:
            c["completing"] += 1
        if j.hold:
            c["hold"] += 1
        if j.requeued:
            c["requeued"] += 1
        if j.started:
            c["started"] += 1
        if st in ("running", "suspended"):
            c["cpus_alloc"] += j.cpus
            c["memory_alloc"] += j.mem
            c["nodes_alloc"] += j.nnodes
    return c


def fmt(name, v, label=None, value=None):
    if label is None:
        return "%s %d" % (name, v)
    return '%s{%s="%s"} %d' % (name, label, value, v)


def generate(args):
    tmpl = read_template(args.template)
    sched_tmpl = scheduler_template_values(args.template)
    rng, nodes, parts, jobs, users, accounts = simulate(args)
    out = {}

    # ---- /metrics/nodes ----
    node_field = {
        "slurm_node_cpus": lambda n: n.cpus,
        "slurm_node_cpus_alloc": lambda n: n.alloc,
        "slurm_node_cpus_effective": lambda n: n.eff,
        "slurm_node_cpus_idle": lambda n: n.eff - n.alloc,
        "slurm_node_memory_alloc_bytes": lambda n: n.mem_alloc,
        "slurm_node_memory_effective_bytes": lambda n: n.mem_eff,
        "slurm_node_memory_free_bytes": lambda n: n.mem_free,
        "slurm_node_memory_bytes": lambda n: n.mem,
    }

    def ncount(pred, ns=nodes):
        return sum(1 for n in ns if pred(n))

    def node_state_counts(ns):
        drained = ncount(lambda n: "drain" in n.flags and n.base == "idle", ns)
        draining = ncount(lambda n: "drain" in n.flags and n.base in ("alloc", "mixed"), ns)
        return {
            "total": len(ns),
            "alloc": ncount(lambda n: n.base == "alloc", ns),
            "mixed": ncount(lambda n: n.base == "mixed", ns),
            "idle": ncount(lambda n: n.base == "idle", ns),
            "down": ncount(lambda n: n.base == "down", ns),
            "completing": ncount(lambda n: "completing" in n.flags, ns),
            "drain": drained + draining,
            "drained": drained,
            "draining": draining,
            "fail": ncount(lambda n: "fail" in n.flags, ns),
            "maint": ncount(lambda n: "maint" in n.flags, ns),
            "noresp": ncount(lambda n: "noresp" in n.flags, ns),
            "powered_down": ncount(lambda n: "powered_down" in n.flags, ns),
            "reboot_req": ncount(lambda n: "reboot_req" in n.flags, ns),
            "resv": ncount(lambda n: "resv" in n.flags, ns),
        }

    g = node_state_counts(nodes)
    nodes_scalar = {
        "slurm_nodes": g["total"], "slurm_nodes_alloc": g["alloc"], "slurm_nodes_completing": g["completing"],
        "slurm_nodes_down": g["down"], "slurm_nodes_drain": g["drain"], "slurm_nodes_drained": g["drained"],
        "slurm_nodes_draining": g["draining"], "slurm_nodes_fail": g["fail"], "slurm_nodes_idle": g["idle"],
        "slurm_nodes_maint": g["maint"], "slurm_nodes_mixed": g["mixed"], "slurm_nodes_noresp": g["noresp"],
        "slurm_nodes_powered_down": g["powered_down"], "slurm_nodes_reboot_req": g["reboot_req"],
        "slurm_nodes_resv": g["resv"],
        # the "powering_up" family carries slurmctld's powering-down counter (see the fixtures README)
        "slurm_nodes_powering_up": 0,
    }
    lines = []
    for name, help_line, type_line in tmpl["nodes"]:
        lines += [help_line, type_line]
        if name in node_field:
            f = node_field[name]
            lines += ['%s{node="%s"} %d' % (name, n.name, f(n)) for n in nodes]
        elif name.startswith("slurm_nodes"):
            lines.append(fmt(name, nodes_scalar.get(name, 0)))
        else:
            sys.exit("generator does not know nodes family %s" % name)
    out["nodes"] = lines

    # ---- /metrics/jobs ----
    gj = job_counts(jobs)
    lines = []
    for name, help_line, type_line in tmpl["jobs"]:
        lines += [help_line, type_line]
        key = "jobs" if name == "slurm_jobs" else name[len("slurm_jobs_"):]
        if key not in gj:
            sys.exit("generator does not know jobs family %s" % name)
        lines.append(fmt(name, gj[key]))
    out["jobs"] = lines

    # ---- /metrics/partitions ----
    pjobs = [[] for _ in parts]
    for j in jobs:
        pjobs[j.part].append(j)
    pcount = [job_counts(js) for js in pjobs]
    pn = [[nodes[i] for i in members] for _, members in parts]
    pstate = [node_state_counts(ns) for ns in pn]

    def pjob_value(pi, key):
        js = pjobs[pi]
        c = pcount[pi]
        if key == "jobs":       # records that are not finished
            return c["jobs"] - c["finished"]
        if key in ("max_job_nodes", "min_job_nodes", "max_job_nodes_nohold", "min_job_nodes_nohold"):
            attr = "max_nodes" if key.startswith("max") else "min_nodes"
            vals = [getattr(j, attr) for j in js if j.state == "pending" and not (key.endswith("nohold") and j.hold)]
            return max(vals) if vals else 0
        if key == "wait_part_node_limit":
            return sum(1 for j in js if j.state == "pending" and j.min_nodes > len(pn[pi]))
        return c[key]

    pnode_field = {
        "alloc": lambda pi: pstate[pi]["alloc"], "cg": lambda pi: pstate[pi]["completing"],
        "cpus_efctv": lambda pi: sum(n.eff for n in pn[pi]),
        "cpus_idle": lambda pi: sum(n.eff - n.alloc for n in pn[pi]),   # state-agnostic, as slurmctld sums it
        "cpus_alloc": lambda pi: sum(n.alloc for n in pn[pi]),
        "down": lambda pi: pstate[pi]["down"], "drain": lambda pi: pstate[pi]["drain"],
        "drained": lambda pi: pstate[pi]["drained"], "draining": lambda pi: pstate[pi]["draining"],
        "fail": lambda pi: pstate[pi]["fail"], "idle": lambda pi: pstate[pi]["idle"],
        "maint": lambda pi: pstate[pi]["maint"],
        "mem_alloc": lambda pi: sum(n.mem_alloc for n in pn[pi]),
        "mem_avail": lambda pi: sum(n.mem for n in pn[pi]),
        "mem_free": lambda pi: sum(n.mem_free for n in pn[pi]),
        "mem_tot": lambda pi: sum(n.mem for n in pn[pi]),
        "mixed": lambda pi: pstate[pi]["mixed"], "no_resp": lambda pi: pstate[pi]["noresp"],
        "powered_down": lambda pi: pstate[pi]["powered_down"],
        "reboot_requested": lambda pi: pstate[pi]["reboot_req"], "resv": lambda pi: pstate[pi]["resv"],
    }
    pnode_zero = {"blocked", "cloud", "dyn_future", "dyn_normal", "external", "future", "invalid_reg",
                  "planned", "power_down", "power_up", "powering_down", "powering_up", "reboot_issued",
                  "unknown"}
    lines = []
    for name, help_line, type_line in tmpl["partitions"]:
        lines += [help_line, type_line]
        if name == "slurm_partitions":
            lines.append(fmt(name, len(parts)))
            continue
        if name == "slurm_partition_cpus":
            f = lambda pi: sum(n.cpus for n in pn[pi])
        elif name == "slurm_partition_nodes":
            f = lambda pi: len(pn[pi])
        elif name == "slurm_partition_jobs":
            f = lambda pi: pjob_value(pi, "jobs")
        elif name.startswith("slurm_partition_jobs_"):
            key = name[len("slurm_partition_jobs_"):]
            f = (lambda k: lambda pi: pjob_value(pi, k))(key)
        elif name.startswith("slurm_partition_nodes_"):
            key = name[len("slurm_partition_nodes_"):]
            if key in pnode_field:
                f = pnode_field[key]
            elif key in pnode_zero:
                f = lambda pi: 0
            else:
                sys.exit("generator does not know partitions family %s" % name)
        else:
            sys.exit("generator does not know partitions family %s" % name)
        lines += ['%s{partition="%s"} %d' % (name, parts[pi][0], f(pi)) for pi in range(len(parts))]
    out["partitions"] = lines

    # ---- /metrics/jobs-users-accts ----
    by_user, by_acct = {}, {}
    for j in jobs:                      # dicts keep first-appearance (job-list) order
        by_user.setdefault(j.user, []).append(j)
        by_acct.setdefault(j.account, []).append(j)
    ucount = [(users[u], job_counts(js)) for u, js in by_user.items()]
    acount = [(None if a is None else accounts[a], job_counts(js)) for a, js in by_acct.items()]
    lines = []
    for name, help_line, type_line in tmpl["jobs-users-accts"]:
        lines += [help_line, type_line]
        if name.startswith("slurm_user_jobs"):
            key = "jobs" if name == "slurm_user_jobs" else name[len("slurm_user_jobs_"):]
            rows, label = ucount, "username"
        elif name.startswith("slurm_account_jobs"):
            key = "jobs" if name == "slurm_account_jobs" else name[len("slurm_account_jobs_"):]
            rows, label = acount, "account"
        else:
            sys.exit("generator does not know jobs-users-accts family %s" % name)
        if key not in gj:
            sys.exit("generator does not know jobs-users-accts family %s" % name)
        for who, c in rows:
            lines.append(fmt(name, c[key]) if who is None else fmt(name, c[key], label, who))
    out["jobs-users-accts"] = lines

    # ---- /metrics/scheduler ----
    s = dict(sched_tmpl)
    npend = gj["pending"]
    scale = max(1.0, len(nodes) / 4.0)
    s.update({
        "slurm_sdiag_jobs_pending": npend, "slurm_sdiag_jobs_running": gj["running"],
        "slurm_sdiag_jobs_started": gj["started"], "slurm_sdiag_jobs_completed": gj["completed"],
        "slurm_sdiag_jobs_canceled": gj["cancelled"], "slurm_sdiag_jobs_failed": gj["failed"],
        "slurm_sdiag_jobs_submitted": gj["jobs"],
        "slurm_schedule_queue_len": npend, "slurm_bf_queue_len": min(npend, 10000),
        "slurm_bf_last_depth": min(npend, 10000), "slurm_bf_last_depth_try": min(npend, 10000),
        "slurm_bf_table_size": min(npend, 10000), "slurm_bf_depth_mean": min(npend, 10000),
        "slurm_bf_queue_len_mean": min(npend, 10000), "slurm_bf_try_depth_mean": min(npend, 10000),
        "slurm_bf_mean_table_sz": min(npend, 10000),
        "slurm_server_thread_cnt": 3, "slurm_agent_cnt": 1, "slurm_agent_thread_cnt": 2,
        "slurm_schedule_cycle_cnt": 4000, "slurm_bf_cycle_cnt": 120, "slurm_sched_exit_end": 3900,
        "slurm_sched_exit_max_depth": 100,
    })
    for k in ("slurm_bf_mean_cycle", "slurm_bf_cycle_last", "slurm_bf_cycle_max", "slurm_schedule_cycle_last",
              "slurm_schedule_cycle_max", "slurm_sched_mean_cycle"):
        s[k] = int(sched_tmpl[k] * math.sqrt(scale))
    s["slurm_bf_cycle_tot"] = s["slurm_bf_mean_cycle"] * s["slurm_bf_cycle_cnt"]
    s["slurm_schedule_cycle_tot"] = s["slurm_sched_mean_cycle"] * s["slurm_schedule_cycle_cnt"]
    s["slurm_schedule_cycle_depth"] = s["slurm_sched_mean_depth_cycle"] * s["slurm_schedule_cycle_cnt"]
    s["slurm_bf_depth_tot"] = s["slurm_bf_depth_mean"] * s["slurm_bf_cycle_cnt"]
    s["slurm_bf_depth_try_tot"] = s["slurm_bf_try_depth_mean"] * s["slurm_bf_cycle_cnt"]
    s["slurm_bf_queue_len_tot"] = s["slurm_bf_queue_len_mean"] * s["slurm_bf_cycle_cnt"]
    s["slurm_bf_table_size_tot"] = s["slurm_bf_mean_table_sz"] * s["slurm_bf_cycle_cnt"]
    s["slurm_bf_exit_end"] = s["slurm_bf_cycle_cnt"]
    s["slurm_backfilled_jobs"] = max(1, gj["started"] // 5)
    s["slurm_last_backfilled_jobs"] = min(s["slurm_backfilled_jobs"], 40)
    lines = []
    for name, help_line, type_line in tmpl["scheduler"]:
        lines += [help_line, type_line]
        if name not in s:
            sys.exit("generator does not know scheduler family %s" % name)
        lines.append(fmt(name, s[name]))
    out["scheduler"] = lines
    return out, {"nodes": len(nodes), "partitions": len(parts), "users": len(ucount),
                 "accounts": len(acount) - (1 if None in by_acct else 0), "jobs": len(jobs),
                 "running": gj["running"], "pending": gj["pending"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--out", required=True, help="directory to write metrics_*.txt into")
    ap.add_argument("--users", type=int, help="default nodes/2 (at least 3)")
    ap.add_argument("--accounts", type=int, help="default nodes/10 (at least 3)")
    ap.add_argument("--partitions", type=int, help="default about 4*(nodes/100)^0.4 (at least 4)")
    ap.add_argument("--seed", type=int, default=25117)
    ap.add_argument("--template", default=DEFAULT_TEMPLATE, help="captured fixture to copy families from")
    args = ap.parse_args()
    if args.nodes < 4:
        ap.error("--nodes must be at least 4")
    if args.users is None:
        args.users = max(3, args.nodes // 2)
    if args.accounts is None:
        args.accounts = max(3, args.nodes // 10)
    if args.partitions is None:
        args.partitions = max(4, round(4 * (args.nodes / 100.0) ** 0.4))
    args.accounts = min(args.accounts, args.users)   # every account needs a user
    out, stats = generate(args)
    os.makedirs(args.out, exist_ok=True)
    total = 0
    for ep in ENDPOINTS:
        data = ("\n".join(out[ep]) + "\n").encode("utf-8")
        path = os.path.join(args.out, "metrics_%s.txt" % ep)
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        total += len(data)
    print("%s: %d nodes, %d partitions, %d users, %d accounts (+ no-account jobs), %d jobs "
          "(%d running, %d pending): %d bytes" % (args.out, stats["nodes"], stats["partitions"], stats["users"],
                                                   stats["accounts"], stats["jobs"], stats["running"],
                                                   stats["pending"], total))


if __name__ == "__main__":
    main()
