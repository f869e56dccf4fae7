#!/usr/bin/env python3
"""Write docs/metrics.md from the mapping table and the golden test's measured differences.

    docs/gen-metrics-doc.py            regenerate (runs build/tests/test_golden for the figures)
    docs/gen-metrics-doc.py --check    exit 1 if docs/metrics.md disagrees with the mapping

The peers' schemas (PEERS: mappings/<stem>.json) get a table each after the legacy one, under
"## Schema <stem>", checked the same way (tests/test_peers.c checks their rows on the peers'
outputs), and the figures build/tests/test_peers prints for each (its SUMMARY and SELF lines: the
families equal to the peer's on every state, and those equal where the peer agrees with itself across
its repeated scrapes), with the families the peer itself does not reproduce; --check runs
build/tests/test_peers too and fails when those paragraphs are not what it prints now.
"""
import json, re, subprocess, sys

MAPPING = "mappings/prometheus-slurm-exporter.json"
DOC = "docs/metrics.md"

def rows():
    return json.load(open(MAPPING))["metrics"]

def code(e):
    return "`" + e.replace("|", "\\|") + "`"

def rest_form(r):
    """The preferred form used with slurmrestd (the first), or None."""
    return (r.get("prefer") or [None])[0]

def ctld_form(r):
    """The form served without slurmrestd: the first preferred form that reads no slurmrestd family,
    else the row's own (native) form."""
    for f in r.get("prefer") or []:
        if "slurmrestd_" not in f["expr"]:
            return f
    return r

def thousands(n):
    return f"{n:,.0f}" if n == int(n) else f"{n:g}"

def fid_cell(r):
    """The native-only fidelity cell: a form whose counters wrap is exact only below its limit."""
    f = ctld_form(r)
    if f.get("fidelity") == "exact" and f.get("wraps_at"):
        return "exact below " + thousands(f["wraps_at"]["limit"])
    return f.get("fidelity", r["fidelity"])

def wrap_text(r):
    """What the table's wraps_at says, for the notes: below which value of which total the form is
    what it says; at or over it a scrape serves it approximate."""
    f = ctld_form(r)
    w = f.get("wraps_at") or r.get("wraps_at")
    if not w:
        return ""
    lim = thousands(w["limit"])
    what = f"**Exact below {lim}**" if f.get("fidelity") == "exact" else f"**As said here only below {lim}**"
    also = ""
    if f is not r and r.get("wraps_at") and r["wraps_at"]["bound"] != w["bound"]:
        also = f"; without /metrics/nodes, {code(r['wraps_at']['bound'])}"
    return (f"{what} of {code(w['bound'])}{also} (16-bit counters; at or over it the scrape serves it approximate, "
            f"`reason=\"counter_wrap\"`). ")

def diff_of(fid, r, diffs, column):
    if fid == "exact":
        return "0 (checked series for series)"
    if fid == "unavailable":
        return "not served"
    return diffs.get((r["name"], column), "")

def table_line(r, diffs):
    fid = ctld_form(r).get("fidelity", r["fidelity"])
    form = rest_form(r)
    rfid = form["fidelity"] if form else fid
    src = code(r["expr"]) if "expr" in r else "none"
    if ctld_form(r) is not r:
        src = code(ctld_form(r)["expr"]) + ", while /metrics/nodes answers; else " + src
    extra = []
    if r.get("rename_labels"): extra.append("rename " + ", ".join(f"{k}→{v}" for k, v in r["rename_labels"].items()))
    if r.get("fill_labels"): extra.append("fill " + ", ".join(f'{k}="{v}"' for k, v in r["fill_labels"].items()))
    if r.get("drop_zero"): extra.append("only when ≠ 0")
    if "default" in r: extra.append(f"default {r['default']}")
    if r.get("absent_ok"): extra.append("no series when its answer is empty: " + ", ".join(f"`{n}`" for n in r["absent_ok"]))
    if r.get("enabled_by"): extra.append(f"only with --{r['enabled_by']}")
    diff = diff_of(fid, r, diffs, "native")
    if fid == "approximate" and r.get("enabled_by"):
        diff = "n/a (old exporter gave no usable figure)"
    rdiff = diff_of(rfid, r, diffs, "slurmrestd") if form else "as native"
    note = r.get("note", "")
    if wrap_text(r):
        note = wrap_text(r) + note
    if form and form.get("note"):
        note += " With slurmrestd: " + form["note"]
    note = note.replace("|", "\\|")
    rsrc = code(form["expr"]) if form else "(native)"
    return (f"| `{r['name']}` | {fid_cell(r)} | {rfid} | {src}{' ('+'; '.join(extra)+')' if extra else ''} | {rsrc} | "
            f"{diff} | {rdiff} | {note} |")

def figures():
    out = subprocess.run(["build/tests/test_golden"], capture_output=True, text=True).stdout
    d = {}
    for line in out.splitlines():
        m = re.match(r"\s+(slurm_\w+)\s+(native|slurmrestd)\s+(\S+)(.*)$", line)
        if m:
            d[(m.group(1), m.group(2))] = m.group(3) + (" (status label differs on down/drained nodes)" if m.group(4).strip() else "")
    return d

PEERS = [
    ("rivosinc-slurm-exporter", "rivosinc/prometheus-slurm-exporter v1.7.0",
     "run with `-slurm.collect-diags`, `-slurm.collect-licenses` and `-slurm.collect-limits` (its CLI mode, port 9092)",
     "every state of `tests/fixtures/peers-25.11` (Slurm 25.11.7, slurmrestd at data_parser v0.0.44; the account "
     "limits on P8 and P9, the states captured with slurmdbd's associations)",
     "`go_*`, `process_*` and `promhttp_*`",
     "Like the legacy exporter, rivosinc runs `sinfo` and `squeue` without `-a`: a partition hidden from its user, "
     "and a node in no partition, are not in its sums, while slurmrestd lists every node and partition (as root's "
     "`sinfo` shows them); the captured state has neither. A family the peer prints only when a value is "
     "above 0 (a license's reservations, account limits) is checked to be absent where the peer printed nothing."),
    ("sckyzo-slurm-exporter", "SckyzO/slurm_exporter v1.8.4",
     "run with its default collectors (port 9341; the 123 it printed on the nine captured states and those it prints only "
     "when there is something to print: suspended, completing and configuring jobs, drain reasons, reservations)",
     "every state of `tests/fixtures/peers-25.11` (Slurm 25.11.7, slurmrestd at data_parser v0.0.44)",
     "`go_*`, `process_*` and `promhttp_*`",
     "SckyzO runs `squeue` without `--states`: it lists no finished job, so its counts of cancelled, completed, "
     "failed, node-failed, preempted and timed-out jobs are always 0, and so are the rows."),
]
PEER_MARK = "\n## Schema "
PEERS_TEST = "build/tests/test_peers"

def peer_figures():
    """Per schema stem, what build/tests/test_peers prints with slurmrestd: its SUMMARY (families
    printed, equal on every state) and SELF figures (families printed in the repeated scrapes, the
    same in every one, of those equal on every state), and the families that moved between the
    peer's own scrapes (name, the reason its note gives, the first moving series' values)."""
    try:
        out = subprocess.run([PEERS_TEST], capture_output=True, text=True, timeout=600).stdout
    except OSError as e:
        sys.exit(f"{sys.argv[0]}: {PEERS_TEST}: {e.strerror}: build it first (make {PEERS_TEST})")
    figs, moves, last = {}, [], None
    for line in out.splitlines():
        m = re.match(r"  repeated scrapes: (\w+) moves \((.*?)\), run by run:$", line)
        if m:
            moves.append([m.group(1), m.group(2).rstrip(":"), None])
            last = moves[-1]
            continue
        m = re.match(r"    (\S+?)(\{.*\})?: (.*)$", line)
        if m and last and last[2] is None:
            last[2] = ((m.group(2) or "") + " " + ", ".join(m.group(3).split())).strip()
            continue
        last = None
        m = re.match(r"SUMMARY (\S+)\.json, with slurmrestd, (\d+) states: the peer printed (\d+) families: (\d+) equal", line)
        if m:
            figs.setdefault(m.group(1), {}).update(states=int(m.group(2)), printed=int(m.group(3)), equal=int(m.group(4)))
        m = re.match(r"SUMMARY (\S+)\.json, ", line)
        if m and moves:
            figs.setdefault(m.group(1), {})["moves"] = moves
            moves = []
        m = re.match(r"SELF (\S+)\.json, with slurmrestd: the peer printed (\d+) families in its (\d+) scrapes of one "
                     r"unchanged cluster, (\d+) the same in every scrape; equal where the peer agrees with itself: (\d+) of (\d+)", line)
        if m:
            figs.setdefault(m.group(1), {}).update(rprinted=int(m.group(2)), runs=int(m.group(3)), same=int(m.group(4)),
                                                   same_equal=int(m.group(5)))
    return figs

def pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b else "-"

def peer_figures_text(stem, title, figs):
    f = figs.get(stem)
    if not f or "same" not in f or "equal" not in f:
        sys.exit(f"{sys.argv[0]}: {PEERS_TEST} printed no SUMMARY and SELF figures for {stem}")
    why = {"Timings are not compared": "a timing", "Read at another instant": "read at another instant",
           "Moves between scrapes": "moves between scrapes"}
    moved = "; ".join(f"`{n}` ({why.get(k, k)}: {v})" for n, k, v in f.get("moves", []))
    return (f"**Figures** (`{PEERS_TEST}`, its SUMMARY and SELF lines, with slurmrestd): of the {f['printed']} families "
            f"{title} printed on the {f['states']} states, {f['equal']} are equal to its output series for series on every "
            f"state ({pct(f['equal'], f['printed'])}). In its {f['runs']} scrapes of one unchanged cluster "
            f"(`tests/fixtures/peers-25.11/_repeat`) it printed {f['rprinted']} families, {f['same']} of them the same "
            f"in every scrape; **equal where the peer agrees with itself: {f['same_equal']} of {f['same']}** "
            f"({pct(f['same_equal'], f['same'])}). The {f['rprinted'] - f['same']} it did not reproduce, each with "
            f"the reason its note gives and the first moving series' values scrape by scrape: {moved}.")

def peer_rows(stem):
    return json.load(open(f"mappings/{stem}.json"))["metrics"]

def peer_fid(r):
    return (rest_form(r) or r)["fidelity"]

def peer_line(r):
    form = rest_form(r)
    note = form.get("note", "") if form else r.get("note", "")
    labels = ", ".join(f"`{k}`→`{v}`" for k, v in (r.get("rename_labels") or {}).items())
    return (f"| `{r['name']}` | {peer_fid(r)} | {r['fidelity']} | {code(form['expr']) if form else ''} | "
            f"{labels} | {note.replace('|', '/')} |")

def peer_section(stem, title, how, where, health, extra, figs):
    rs = peer_rows(stem)
    c = {f: sum(1 for r in rs if peer_fid(r) == f) for f in ("exact", "approximate", "unavailable")}
    n = {f: sum(1 for r in rs if r["fidelity"] == f) for f in ("exact", "approximate", "unavailable")}
    out = [f"## Schema {stem}", "",
           f"`mappings/{stem}.json`: the {len(rs)} families of {title}, {how}, with its names, HELP texts, "
           f"TYPEs, label names and rules for when a series exists (the Go client's own families, {health}, "
           f"describe the exporter's process and are not rows; every other family it prints is one, its "
           f"health families and a histogram included). With "
           f"slurmrestd: {c['exact']} exact, {c['approximate']} approximate, {c['unavailable']} unavailable; "
           f"from slurmctld alone (the column 'without'): {n['exact']} exact, {n['approximate']} approximate, "
           f"{n['unavailable']} unavailable (slurmctld's endpoints carry no per-node state or load, per-job, license, "
           f"association or RPC data in the peer's form). `tests/test_peers.c` serves the table on {where}, with and without "
           f"slurmrestd's answers (P1-busy-mix .. P9-limits-changed-node-down, and any state added there), and finds every "
           f"exact row equal to the peer's output series for series; every approximate one within the largest "
           f"difference its note states (the largest absolute difference of one series' value from the peer's, a "
           f"series on one side only counting as its whole value), but a timing (\"Timings are not compared:\") or a "
           f"figure read at another instant (\"Read at another instant:\", sdiag's counters), which is held to the "
           f"peer's label sets or names and measured, not bounded. It prints per schema the families the peer "
           f"printed, those equal series for series on every state, the approximate ones with their worst difference, "
           f"and the unavailable ones. {extra}",
           "", peer_figures_text(stem, title, figs),
           "", "| family | with slurmrestd | without | slurmrestd form | labels renamed | notes |", "|---|---|---|---|---|---|"]
    return "\n".join(out + [peer_line(r) for r in rs]) + "\n"

def check_peers(text):
    bad = 0
    figs = peer_figures()
    if REPEAT_WHY not in text:
        print(f"{DOC}: the paragraph on what two scrapes of a peer show is missing or out of date; run {sys.argv[0]}")
        bad += 1
    for stem, title, *_ in PEERS:
        if peer_figures_text(stem, title, figs) not in text:
            print(f"{DOC}: schema {stem}: its figures are not what {PEERS_TEST} prints now; run {sys.argv[0]}")
            bad += 1
        at = text.find(PEER_MARK + stem + "\n")
        if at < 0:
            print(f"{DOC}: no section 'Schema {stem}'; run {sys.argv[0]}")
            bad += 1
            continue
        end = text.find(PEER_MARK, at + 1)
        part = text[at:end if end >= 0 else len(text)]
        rs = peer_rows(stem)
        for r in rs:
            if not re.search(r"^\| `%s` \| %s \| %s \|" % (re.escape(r["name"]), peer_fid(r), r["fidelity"]), part, re.M):
                print(f"{DOC}: schema {stem}: row {r['name']} missing or out of date; run {sys.argv[0]}")
                bad += 1
        n = len(re.findall(r"^\| `", part, re.M))
        if n != len(rs):
            print(f"{DOC}: schema {stem}: {n} rows documented, the mapping has {len(rs)}")
            bad += 1
    return bad

def check():
    full = open(DOC).read()
    text = full.split(PEER_MARK)[0]
    bad = check_peers(full)
    for r in rows():
        form = rest_form(r)
        rfid = form["fidelity"] if form else r["fidelity"]
        if not re.search(r"^\| `%s` \| %s \| %s \|" % (re.escape(r["name"]), re.escape(fid_cell(r)), rfid), text, re.M):
            print(f"{DOC}: row {r['name']} ({fid_cell(r)}) missing or out of date; run {sys.argv[0]}")
            bad += 1
        elif wrap_text(r) and wrap_text(r).replace("|", "\\|") not in text:
            print(f"{DOC}: row {r['name']}: its wraps_at (which total decides) is not said; run {sys.argv[0]}")
            bad += 1
    n = len(re.findall(r"^\| `slurm_", text, re.M))
    if n != len(rows()):
        print(f"{DOC}: {n} rows documented, the mapping has {len(rows())}")
        bad += 1
    print(f"{len(rows()) - bad} passed, {bad} failed")
    return 1 if bad else 0

def main():
    if "--check" in sys.argv:
        sys.exit(check())
    diffs = figures()
    rs = rows()
    counts = {f: sum(1 for r in rs if r["fidelity"] == f) for f in ("exact", "approximate", "unavailable")}
    counts["below"] = sum(1 for r in rs if fid_cell(r).startswith("exact below"))
    counts["wrapping"] = sum(1 for r in rs if wrap_text(r))
    rfid = [(rest_form(r) or r)["fidelity"] for r in rs]
    rcounts = {"r" + f: rfid.count(f) for f in ("exact", "approximate", "unavailable")}
    out = [HEADER.format(n=len(rs), **counts, **rcounts)]
    out.append("| legacy family | native only | with slurmrestd | native source | slurmrestd form | largest difference, native only | largest difference, with slurmrestd | why / notes |")
    out.append("|---|---|---|---|---|---|---|---|")
    out += [table_line(r, diffs) for r in rs]
    out.append(FOOTER)
    out.append(REPEAT_WHY)
    figs = peer_figures()
    out += [peer_section(*p, figs) for p in PEERS]
    open(DOC, "w").write("\n".join(out) + "\n")

HEADER = """# Legacy metrics: source and fidelity

Generated by `docs/gen-metrics-doc.py` from `mappings/prometheus-slurm-exporter.json` and the
golden test (`tests/test_golden.c`); `tests/test_docs.sh` fails when this page and the table
disagree.

All {n} families of prometheus-slurm-exporter 0.20 (58, plus the 4 GPU families served with
`--gpus-acct`), with the same names, HELP texts, label names and rules for when a series exists.
Two columns of fidelity:

- **native only** (slurmctld's OpenMetrics endpoints; no `--slurmrestd.url`, or slurmrestd down):
  {exact} exact ({below} of them only below 65,536: "exact below 65,536"), {approximate} approximate,
  {unavailable} unavailable.
- **with slurmrestd** (`--slurmrestd.url` and `--slurmrestd.jobs`, slurmrestd up): {rexact} exact,
  {rapproximate} approximate, {runavailable} unavailable. A row's preferred slurmrestd form
  (`prefer`, docs/mapping.md) is used while its slurmrestd sources answer; otherwise the row falls
  back to its native source. Which one each scrape used is in
  `slurm_exporter_shim_row_fidelity{{family,fidelity,upstream}}`. With `--slurmrestd.url` alone
  (no `--slurmrestd.jobs`: slurmrestd's full `/jobs` is not fetched), the eleven job-state rows
  `slurm_queue_<state>` are still exact, from `/jobs/state` (each job's id and state alone, fetched
  every `--slurmrestd.min-interval`; the golden test checks them on every slurmrestd capture that
  way, and with `/jobs` down); the rows whose slurmrestd form reads `slurmrestd_jobs` (pending
  reasons, per-user, per-account and per-partition jobs and CPUs) are served from their native forms.

- **exact**: the source measures the same thing the old exporter's command did. The golden test
  checks these series for series (label sets and values) against what the real old exporter printed
  for the same cluster instant: native forms on all 9 slurmctld captures (Slurm 25.11.7 and 26.05.3)
  and on the 12 slurmrestd captures with slurmrestd's answers missing; slurmrestd forms on the 12
  slurmrestd captures (`tests/fixtures/slurm-25.11-rest/`, Slurm 25.11.7 at data_parser v0.0.44,
  and `tests/fixtures/slurm-26.05-rest/`, 26.05.3 at v0.0.45; with `--gpus-acct`).
- **approximate**: the source does not carry what the old exporter read; the row computes the
  closest value and says why. "Largest difference" is the largest absolute difference from the old
  exporter's value measured over those captures (native only: all 21; with slurmrestd: the 12
  slurmrestd captures; a series missing on one side counts as its whole value).
- **unavailable**: no source; the family is not served.
- **16-bit counters**: slurmctld keeps 73 of its families in 16 bits (Slurm 25.11 and 26.05): node
  counts, partition and account CPU sums wrap at 65,536, silently (70,000 reads 4,464). {wrapping} rows
  read them natively; each says below which value of which total (a family that does not wrap: the
  partition's CPUs, the number of nodes, the cluster's CPUs) it is what its fidelity says. At or
  over it, that scrape serves the row approximate: `slurm_exporter_shim_row_fidelity` gets
  `reason="counter_wrap"`, the status page lists it, the log says it once (`wraps_at`,
  docs/mapping.md). slurmrestd's forms do not wrap; a partition holding every node is summed from
  the per-node series, which do not wrap either. `tests/test_wrap.c` checks this on generated states:
  a partition of 131,072 CPUs, an account running 70,000 CPUs, 70,000 nodes.

Units are the old ones: memory in MB (slurmctld's `*_bytes` families carry MiB despite the name),
scheduler cycle times in microseconds. Every family is a gauge, as in the old exporter, including
the three `*_total` scheduler families.
"""

REPEAT_WHY = """
## The peers' schemas: two figures

Each peer schema below has two figures, which `tests/test_peers.c` measures and prints. The first is
the bar the shim is held to: of the families the peer printed on the captured states, how many the
shim serves equal to the peer's output series for series on every state. The second measures the same
against what the peer itself can repeat. The peer was scraped three times in a row on one unchanged
cluster (`tests/fixtures/peers-25.11/_repeat`: capture.sh run three times, one straight after the
other, on P9's cluster; the nodes', jobs', partitions' and shares' answers byte-identical from run to
run). Of the families the peer printed the same in every run, how many the shim equals on every
state: "equal where the peer agrees with itself: N of M".

Some families cannot be equal even between two scrapes of the peer itself:

- **Timings.** The collectors' durations and rivosinc's `*_scrape_duration` time this scrape's
  commands. rivosinc's `slurm_node_scrape_duration` was 572, 1038 and 1272 ms in the three runs.
- **sdiag's RPC statistics.** Every reader's RPCs count, the peer's own among them. Each scrape runs
  its `sinfo`, `squeue` and `scontrol` before it reads `sdiag`, and anyone else's calls between two
  scrapes count too. rivosinc's `REQUEST_PARTITION_INFO` count was 138, 163 and 189 in the three
  runs, so no second reader sees the same numbers.
- **The backfill scheduler's figures.** These are its cycle count, their sum, and the last and mean
  cycle. slurmctld's backfill thread changes them at the end of each cycle. It runs one every
  `bf_interval` (30 s by default) once any job, node, partition or reservation record was updated
  since the last one, which slurmctld's own bookkeeping does while the nodes and jobs look unchanged.
  A cycle ran between the second and the third run (33, 33, 34 cycles). These rows stay exact: the
  figure is the one slurmctld holds, and it was equal to the peer's on every captured state. Their
  notes say "Moves between scrapes:". A reader at another instant differs by the cycles between the
  reads. Even one capture can straddle a cycle. In the third run, slurmctld's `/metrics/scheduler`
  said 33 cycles, the last of 141 µs, at 11:30:11. SckyzO's `sdiag` at 11:30:20 already gave the new
  cycle's 233 µs, and rivosinc's at 11:30:24 gave 34 cycles.

`tests/test_peers.c` fails in two cases. The first is a family that moves between the peer's own
scrapes while its row's note does not say why ("Timings are not compared:", "Read at another
instant:" or "Moves between scrapes:"). The second is a note that says so of a family the peer
printed the same every time. rivosinc's summed loads (`slurm_cpu_load`, `slurm_partition_cpu_load`)
count as the same, because their notes allow the last bit of a sum added in Go's map order to differ
(30.990000000000002, then 30.989999999999995).
"""

FOOTER = """
## What is not reproduced

- `go_*`, `process_*` and `promhttp_*` families of the old exporter's Go runtime are not served;
  the shim's own health is in `slurm_exporter_shim_*` instead.
- The old exporter read `sinfo` without `-a`, so nodes and partitions hidden from the exporter's
  user were not counted; native metrics count every node and partition. (It usually ran as root,
  which sees hidden partitions anyway, as in the slurmrestd captures.)
- `slurm_queue_pending_dependency` and `slurm_account_fairshare` have no native source (pending
  reasons and sshare data are not in slurmctld's metrics): they are served only with slurmrestd.
- The GPU families have no exact reference on Slurm 25.11: the old exporter's own commands no
  longer give the real counts there.

## Where the job-state rows come from

The `slurm_queue_*` rows read from slurmctld (all but `slurm_queue_pending_dependency`) sum the
per-account counts of `/metrics/jobs-users-accts`, `sum(slurm_account_jobs_<state>) or vector(0)`,
instead of reading `slurm_jobs_<state>` of `/metrics/jobs`: the scrape fetches the former anyway,
and the latter, a walk of every job record in slurmctld, is then never fetched (docs/operations.md,
"What the defaults cost"). The values are the same: slurmctld counts every job record once in
exactly one account entry (jobs without an account in one unlabelled entry, included in the sum)
with the same per-state predicates (`_fill_jobs_statistics` and `_aggregate_job_to_jobs` in its
statistics.c), and `tests/test_golden.c` checks every `slurm_jobs_<state>` against the sums of the
account and of the user entries on all 15 captures. Two `/metrics/jobs` families are counted
differently and are not derived: `slurm_jobs` (array tasks expanded; +1 per record per account)
and, on 26.05, `slurm_jobs_nodes_alloc` (distinct nodes; a sum per account). One case would differ
in principle: jobs with no account and jobs whose account is the empty string both make an
unlabelled entry, and slurmctld refuses the second as a duplicate series, so its jobs would be
missing from the sums; no capture has it.
"""

if __name__ == "__main__":
    main()
