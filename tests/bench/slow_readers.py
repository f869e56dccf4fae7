#!/usr/bin/env python3
"""The shim's memory with N clients that request /metrics and do not read the answer.

Starts fake_slurmctld on DIR (e.g. a payload from gen_payload.py) and the shim with
--slurmctld.min-interval 60, scrapes once to warm up (and to size the answer), then opens N
connections with a 4 KiB receive buffer that send one GET /metrics each and read only the status
line, and prints the shim's VmRSS (from /proc/PID/status) before and after. Figures only, no
assertion (tests/test_http_limits.c test_slow_readers_share_one_body asserts a bound).

usage: slow_readers.py --dir DIR [--shim BIN] [--fake BIN] [--clients N ...]
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--shim", default=os.path.join(ROOT, "slurm-exporter-shim"))
    ap.add_argument("--fake", default=os.path.join(ROOT, "build/tests/fake_slurmctld"))
    ap.add_argument("--clients", type=int, nargs="+", default=[20, 64])
    args = ap.parse_args()
    for n in args.clients:
        run(args, n)


if __name__ == "__main__":
    main()
