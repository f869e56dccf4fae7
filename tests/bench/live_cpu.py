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


def main(argv):
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
