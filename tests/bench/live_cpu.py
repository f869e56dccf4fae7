#!/usr/bin/env python3
"""tests/bench/live_cpu.py: the CPU time a command costs another process (tests/bench/live-slurm.sh: slurmctld's CPU per scrape).

    live_cpu.py idle PID SECONDS
        PID's CPU time per second of wall time over SECONDS while nothing is run (ms/s)
    live_cpu.py run PID IDLE RUNS EVERY NAME [--also PID2[:LABEL]]... -- CMD...
        runs CMD RUNS times, EVERY seconds from the start of one run to the start of the next
        (a run that takes longer starts the next at once), and prints one line: NAME, then PID's
        CPU time per run less IDLE ms/s over the run's own duration, as mean +- sd (min / median /
        max), the same mean from /proc/PID/stat's clock ticks over the whole row as a check, and,
        for each --also, PID2's mean per run (not idle-corrected), as "+X ms in LABEL" (LABEL
        defaults to slurmrestd). Then a line of the runs' values.

    live_cpu.py window SECONDS EVERY URL NAME=PID[:children]...
        GETs URL (as Prometheus does: gzip accepted, X-Prometheus-Scrape-Timeout-Seconds: 10) every
        EVERY seconds for SECONDS, and prints, for each whole minute, each NAME's CPU time in that
        minute (ms) and their total: PID's process CPU clock, or with ":children" the CPU of PID's
        children it has waited for (/proc/PID/stat's cutime + cstime, 10 ms ticks: the old
        exporter's sinfo, squeue and sdiag); then each scrape's duration, status and the
        slurm_exporter_shim_* lines about slurmrestd's /jobs it served and which endpoints it was
        given (slurm_exporter_shim_up: tests/bench/live-rest-jobs.sh).

PID's CPU time is read from its process CPU clock (clock_getcpuclockid): utime + stime of every
thread, live and exited, as /proc/PID/stat sums them, in nanoseconds instead of /proc's 10 ms
ticks, so that one run of a few milliseconds can be measured. A run's value is its CPU less the
idle rate over the run's wall time; the idle rate is measured just before (the caller's idle
command). A value below zero (idle noise) is kept: clipping would bias the mean.
"""
import ctypes
import os
import statistics
import subprocess
import sys
import time

_libc = ctypes.CDLL(None, use_errno=True)
_HZ = os.sysconf("SC_CLK_TCK")


def cpu_clock(pid):
    clk = ctypes.c_int()
    err = _libc.clock_getcpuclockid(pid, ctypes.byref(clk))
    if err:
        sys.exit("live_cpu: no CPU clock for pid %d: %s" % (pid, os.strerror(err)))
    return clk.value


def cpu_ms(clk):
    return time.clock_gettime_ns(clk) / 1e6


def stat_ms(pid):
    """utime + stime from /proc/PID/stat, in ms (after the command name, which may hold spaces)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / _HZ


def idle(pid, seconds):
    clk = cpu_clock(pid)
    c0, t0 = cpu_ms(clk), time.monotonic()
    time.sleep(seconds)
    c1, t1 = cpu_ms(clk), time.monotonic()
    print("%.4f" % ((c1 - c0) / (t1 - t0)))


def run(pid, idle_rate, runs, every, name, also, cmd):
    clk = cpu_clock(pid)
    aclks = [(cpu_clock(apid), label) for apid, label in also]
    s0, a0 = stat_ms(pid), [cpu_ms(aclk) for aclk, _ in aclks]
    t_first = time.monotonic()
    values, failed = [], 0
    for k in range(runs):
        c0, t0 = cpu_ms(clk), time.monotonic()
        rc = subprocess.call(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c1, t1 = cpu_ms(clk), time.monotonic()
        failed += rc != 0
        values.append(c1 - c0 - idle_rate * (t1 - t0))
        wait = t_first + (k + 1) * every - time.monotonic()
        if wait > 0 and k + 1 < runs:
            time.sleep(wait)
    t_last = time.monotonic()
    s1 = stat_ms(pid)
    a1 = [cpu_ms(aclk) for aclk, _ in aclks]
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    check = (s1 - s0 - idle_rate * (t_last - t_first)) / runs
    line = "  %-44s %8.1f +- %6.1f  (%7.1f / %7.1f / %7.1f)  stat %7.1f" % (
        name, mean, sd, min(values), statistics.median(values), max(values), check)
    for (_, label), b, e in zip(aclks, a0, a1):
        line += "  +%.1f ms in %s" % ((e - b) / runs, label)
    if failed:
        line += "  (%d of %d runs failed)" % (failed, runs)
    print(line)
    print("  #   runs: " + " ".join("%.1f" % v for v in values))
    sys.stdout.flush()


def children_ms(pid):
    """cutime + cstime of PID, in ms: the CPU of the children it has waited for."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) * 1000.0 / _HZ


def scrape(url, out):
    import urllib.request
    import gzip
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip",
                                               "X-Prometheus-Scrape-Timeout-Seconds": "10"})
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            body = r.read()
            if r.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            status = r.status
    except Exception as e:  # a failed scrape is a row too
        body, status = b"", str(e).replace("\n", " ")[:80]
    keep = [l for l in body.decode("utf-8", "replace").splitlines()
            if l.startswith("slurm_exporter_shim_") and ("slurmrestd-jobs" in l or l.startswith("slurm_exporter_shim_up{")
                                                       or l.startswith("slurm_exporter_shim_row_age_seconds{family=\"slurm_queue_pending"))
            and not l.startswith(("slurm_exporter_shim_response_bytes", "slurm_exporter_shim_http_status",
                                  "slurm_exporter_shim_parse_errors", "slurm_exporter_shim_slow_fetches"))]
    out.append((t0, time.monotonic() - t0, status, len(body), keep))


def window(seconds, every, url, specs):
    import threading
    procs = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        pid, _, kind = rest.partition(":")
        pid = int(pid)
        if kind == "children":
            procs.append((name, lambda p=pid: children_ms(p)))
        else:
            clk = cpu_clock(pid)
            procs.append((name, lambda c=clk: cpu_ms(c)))
    scrapes, threads = [], []
    start = time.monotonic()
    last = [f() for _, f in procs]
    minute, k = 1, 0
    print("| minute | scrapes | " + " | ".join(n + " (ms)" for n, _ in procs) + " | total (ms) |")
    print("|---:|---:|" + "---:|" * (len(procs) + 1))
    totals = [0.0] * len(procs)
    while True:
        now = time.monotonic() - start
        if every > 0 and k * every <= now and k * every < seconds:
            t = threading.Thread(target=scrape, args=(url, scrapes))
            t.start()
            threads.append(t)
            k += 1
        if now >= minute * 60:
            cur = [f() for _, f in procs]
            d = [c - l for c, l in zip(cur, last)]
            totals = [a + b for a, b in zip(totals, d)]
            n = sum(1 for s in scrapes if (minute - 1) * 60 <= s[0] - start < minute * 60)
            print("| %d | %d | %s | %.0f |" % (minute, n, " | ".join("%.0f" % v for v in d), sum(d)))
            sys.stdout.flush()
            last = cur
            minute += 1
            if (minute - 1) * 60 >= seconds:
                break
        time.sleep(0.05)
    for t in threads:
        t.join()
    m = minute - 1
    print("| mean per minute | | %s | %.0f |" % (" | ".join("%.0f" % (v / m) for v in totals), sum(totals) / m))
    for t0, took, status, size, keep in sorted(scrapes):
        print("  # scrape at %5.1f s: %5.2f s, %s, %d bytes; %s" % (t0 - start, took, status, size, "; ".join(keep)))
    sys.stdout.flush()


def main(argv):
    if len(argv) >= 6 and argv[1] == "window":
        window(float(argv[2]), float(argv[3]), argv[4], argv[5:])
        return
    if len(argv) == 4 and argv[1] == "idle":
        idle(int(argv[2]), float(argv[3]))
        return
    if len(argv) < 8 or argv[1] != "run" or "--" not in argv:
        sys.exit(__doc__)
    sep = argv.index("--")
    head, cmd = argv[2:sep], argv[sep + 1:]
    also = []
    while len(head) >= 7 and head[-2] == "--also":
        apid, _, label = head[-1].partition(":")
        also.insert(0, (int(apid), label or "slurmrestd"))
        head = head[:-2]
    if len(head) != 5 or not cmd:
        sys.exit(__doc__)
    pid, idle_rate, runs, every, name = int(head[0]), float(head[1]), int(head[2]), float(head[3]), head[4]
    run(pid, idle_rate, runs, every, name, also, cmd)


if __name__ == "__main__":
    main(sys.argv)
