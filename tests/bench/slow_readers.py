#!/usr/bin/env python3
"""The shim's memory with N clients that request /metrics and do not read the answer.

Starts fake_slurmctld on DIR (e.g. a payload from gen_payload.py) and the shim with
--slurmctld.min-interval 60, scrapes once to warm up (and to size the answer), then opens N
connections with a 4 KiB receive buffer that send one GET /metrics each and read only the status
line, and prints the shim's VmRSS (from /proc/PID/status) before and after. Figures only, no
assertion (tests/test_http_limits.c test_slow_readers_share_one_body asserts a bound).

With --apart, the N clients arrive one min-interval apart instead (--slurmctld.min-interval 0.4,
one every 0.5 s), so that each holds an answer of its own, while an ordinary scraper asks /metrics
every 0.5 s and reads it whole (each of its scrapes needs a new answer too), with
--web.max-held-bytes BUDGET: prints how many of the ordinary scrapes got 200, how many of the
slow clients the shim closed for the budget (the holders of the oldest answers; from its log), how
many could not read their answer whole at the end, the most the budget's count was at a render
that found it over, and the shim's VmRSS before and at its peak (tests/test_slow_readers.c
asserts a bound).

usage: slow_readers.py --dir DIR [--shim BIN] [--fake BIN] [--clients N ...] [--apart [--budget BYTES]]
"""

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def vmrss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def wait_up(port):
    for _ in range(400):
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=1).read()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("nothing answers on port %d" % port)


def run(args, clients):
    fport, sport = free_port(), free_port()
    log = tempfile.NamedTemporaryFile(prefix="slow-readers-", suffix=".log", delete=False)
    fake = subprocess.Popen([args.fake, "--port", str(fport), "--dir", args.dir], stderr=log)
    shim = subprocess.Popen([args.shim, "--web.listen-address", "127.0.0.1:%d" % sport,
                             "--slurmctld.url", "http://127.0.0.1:%d" % fport,
                             "--mapping.file", os.path.join(ROOT, "mappings/prometheus-slurm-exporter.json"),
                             "--slurmctld.min-interval", "60", "--slurmctld.timeout", "60",
                             "--web.max-connections", str(2 * clients + 8)], stderr=log)
    socks = []
    try:
        wait_up(fport)
        wait_up(sport)
        body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % sport, timeout=120).read()
        before = vmrss_kb(shim.pid)
        for _ in range(clients):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(120)
            s.connect(("127.0.0.1", sport))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            socks.append(s)
        for s in socks:
            head = b""
            while len(head) < 12:
                head += s.recv(12 - len(head))
            assert head == b"HTTP/1.1 200", head
        after = vmrss_kb(shim.pid)
        print("figures: %s, answer %d bytes, %d clients not reading: VmRSS %d kB before, %d kB after (+%d kB)"
              % (os.path.basename(args.shim), len(body), clients, before, after, after - before))
    finally:
        for s in socks:
            s.close()
        shim.terminate()
        fake.terminate()
        shim.wait()
        fake.wait()


def read_whole(s):
    """The rest of a slow client's answer: True if it came whole (Content-Length), False if the
    connection ended first."""
    data = b""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)  # 4 KiB took 50 s for 4 MB
    s.settimeout(30)
    try:
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            data += chunk
            head, sep, body = data.partition(b"\r\n\r\n")
            if sep:
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:") and len(body) >= int(line.split(b":")[1]):
                        return True
    except OSError:
        pass
    return False


def run_apart(args, clients):
    fport, sport = free_port(), free_port()
    log = tempfile.NamedTemporaryFile(prefix="slow-readers-", suffix=".log", delete=False)
    fake = subprocess.Popen([args.fake, "--port", str(fport), "--dir", args.dir], stderr=log)
    shim = subprocess.Popen([args.shim, "--web.listen-address", "127.0.0.1:%d" % sport,
                             "--slurmctld.url", "http://127.0.0.1:%d" % fport,
                             "--mapping.file", os.path.join(ROOT, "mappings/prometheus-slurm-exporter.json"),
                             "--slurmctld.min-interval", "0.4", "--slurmctld.jobs.min-interval", "0.4",
                             "--slurmctld.timeout", "60", "--web.max-held-bytes", str(args.budget), "--log.level", "debug",
                             "--web.max-connections", str(2 * clients + 8)], stderr=log)
    socks, statuses, peak = [], [], [0]
    done = threading.Event()

    def scraper():
        while not done.is_set():
            try:
                r = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % sport, timeout=30)
                statuses.append(r.status if b"slurm_cpus_total" in r.read() else -1)
            except urllib.error.HTTPError as e:
                statuses.append(e.code)
            except OSError:
                statuses.append(0)
            peak[0] = max(peak[0], vmrss_kb(shim.pid))
            time.sleep(0.5)
    try:
        wait_up(fport)
        wait_up(sport)
        body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % sport, timeout=120).read()
        before = vmrss_kb(shim.pid)
        t = threading.Thread(target=scraper)
        t.start()
        for _ in range(clients):
            time.sleep(0.5)
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(120)
            s.connect(("127.0.0.1", sport))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            head = b""
            while len(head) < 12:
                head += s.recv(12 - len(head))
            assert head == b"HTTP/1.1 200", head
            socks.append(s)
            peak[0] = max(peak[0], vmrss_kb(shim.pid))
        done.set()
        t.join()
        alive = shim.poll() is None
        closed = sum(1 for s in reversed(socks) if not read_whole(s))
        ok = sum(1 for st in statuses if st == 200)
        # the most the ledger held when a render found it over the budget (the shim's debug lines)
        with open(log.name, errors="replace") as f:
            text = f.read()
        held = [int(m) for m in re.findall(r"not read yet hold (\d+) bytes", text)]
        evicted = sum(int(m) for m in re.findall(r"closed (?:the )?(\d+) (?:more )?connections", text))
        print("figures: %s, answer %d bytes, %d clients not reading one interval apart, --web.max-held-bytes %d: "
              "%d of %d ordinary scrapes 200, %d slow clients closed for the budget (%d lost their connection by the end: "
              "these and those idle past --web.connection-timeout), held at most %d bytes before a render, "
              "VmRSS %d kB before, peak %d kB (+%d kB)%s; log %s"
              % (os.path.basename(args.shim), len(body), clients, args.budget, ok, len(statuses), evicted, closed,
                 max(held) if held else 0, before, peak[0], peak[0] - before,
                 "" if alive and shim.poll() is None else ", THE SHIM EXITED", log.name))
    finally:
        done.set()
        for s in socks:
            s.close()
        shim.terminate()
        fake.terminate()
        shim.wait()
        fake.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--shim", default=os.path.join(ROOT, "slurm-exporter-shim"))
    ap.add_argument("--fake", default=os.path.join(ROOT, "build/tests/fake_slurmctld"))
    ap.add_argument("--clients", type=int, nargs="+", default=[20, 64])
    ap.add_argument("--apart", action="store_true", help="clients one min-interval apart, with an ordinary scraper")
    ap.add_argument("--budget", type=int, default=268435456, help="--web.max-held-bytes with --apart")
    args = ap.parse_args()
    for n in args.clients:
        (run_apart if args.apart else run)(args, n)


if __name__ == "__main__":
    main()
