#!/bin/sh
# Where the daemon listens: --web.listen-address repeated (one listener each, all serving the same;
# an address in use stops the start, nothing served), --web.systemd-socket (the sockets a .socket unit
# passes: LISTEN_FDS from fd 3 and LISTEN_PID, handed over here by a python3 harness that binds a
# socket, puts it on fd 3 and execs the shim, as systemd does; refused without them or for another
# pid), and the daemon's log lines with --log.format json (each one JSON object). Runs the shim on
# a replayed capture, 127.0.0.1 only. The last line is "N passed, M failed".
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${SHIM_BIN:-./slurm-exporter-shim}
MAP=mappings/prometheus-slurm-exporter.json
STATE=tests/fixtures/slurm-25.11/04-resumed-busy
T=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -f "$T/log" ] && sed 's/^/     /' "$T/log" | head -10; }

# wait_listening: until the shim logs its listeners (or exits); 0 when it listens
wait_listening() {
	i=0
	while [ $i -lt 200 ]; do
		grep -q 'listening on' "$T/log" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}
stop() {
	kill "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	pid=
	if [ "$rc" -eq 0 ] && ! grep -q 'Sanitizer\|runtime error:' "$T/log"; then ok "$1: exits 0 on SIGTERM"; else bad "$1: exit $rc on SIGTERM"; fi
}
# metrics_from PORT: /metrics of the shim on PORT holds the state's slurm_cpus_alloc. A scrape is
# tried three times, 20 s each: a fresh-root run of the suite at load 12 once had no answer within
# one 10 s try (the first scrape renders the state; what is checked is the answer, not its time).
# The last try's curl status and first line are left in $T/metrics_from for the failure message.
metrics_from() {
	for _try in 1 2 3; do
		curl -s --max-time 20 "http://127.0.0.1:$1/metrics" >"$T/metrics_body"
		echo "curl exit $?, try $_try: $(head -c 200 "$T/metrics_body" | head -1)" >"$T/metrics_from"
		grep -q '^slurm_cpus_alloc 42$' "$T/metrics_body" && return 0
	done
	return 1
}

# ---------------------------------------------------------------- two listeners
"$BIN" --replay-dir "$STATE" --mapping.file "$MAP" --web.listen-address 127.0.0.1:0 --web.listen-address=127.0.0.1:0 \
	--log.format json 2>"$T/log" >/dev/null &
pid=$!
if wait_listening; then
	# "listening on 127.0.0.1:0 (port A), 127.0.0.1:0 (port B), path ..."
	ports=$(python3 -c '
import json, re, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["msg"].startswith("listening on "):
        print(" ".join(re.findall(r"\(port (\d+)\)", o["msg"])))
' "$T/log")
	set -- $ports
	if [ $# -eq 2 ] && [ "$1" != "$2" ]; then ok "two --web.listen-address: two ports ($1, $2)"; else bad "two --web.listen-address: ports '$ports'"; fi
	for p in "$@"; do
		if metrics_from "$p"; then ok "listener on port $p serves /metrics"; else bad "listener on port $p serves no metrics ($(cat "$T/metrics_from"))"; fi
	done
	if python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert sorted(o) == ["level", "msg"], o
' "$T/log"; then ok "--log.format json: every daemon line is a JSON object of level and msg"; else bad "--log.format json: a line is not JSON"; fi
	stop "two listeners"
else
	bad "two --web.listen-address: the shim does not start"
fi

# one address and port given twice, however written (repeated, "127.1" for 127.0.0.1,
# an IPv4-mapped IPv6 address): listened on once, with a warning naming both, and served (binding it
# twice failed with "address in use" before)
twice() { # what, then the flags
	what=$1
	shift
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	set -- $(echo "$*" | sed "s/PORT/$port/g")
	"$BIN" --replay-dir "$STATE" --mapping.file "$MAP" "$@" >/dev/null 2>"$T/log" &
	pid=$!
	if wait_listening; then
		if metrics_from "$port"; then ok "$what: served on port $port"; else bad "$what: no metrics on $port ($(cat "$T/metrics_from"))"; fi
		n=$(grep 'listening on' "$T/log" | grep -o "(port $port)" | wc -l)
		if [ "$n" -eq 1 ]; then ok "$what: one listener"; else bad "$what: $n listeners"; fi
		if grep -q 'level=warn msg="--web.listen-address .* is already served by .* (the same address and port): listening on it once"' "$T/log"; then
			ok "$what: a warning names both"
		else
			bad "$what: no warning"
		fi
		stop "$what"
	else
		bad "$what: the shim does not start"
	fi
}
twice "an address given twice" --web.listen-address 127.0.0.1:PORT --web.listen-address 127.0.0.1:PORT
twice "127.1 and 127.0.0.1" --web.listen-address 127.1:PORT --web.listen-address=127.0.0.1:PORT
twice "an IPv4-mapped IPv6 address and its IPv4 one" --web.listen-address 127.0.0.1:PORT --web.listen-address [::ffff:127.0.0.1]:PORT
# a comma list: refused at start (the flag is repeated instead), naming the value
"$BIN" --replay-dir "$STATE" --mapping.file "$MAP" --web.listen-address "127.0.0.1:1,127.0.0.1:1" >/dev/null 2>"$T/log"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'flag --web.listen-address: value "127.0.0.1:1,127.0.0.1:1" is not a valid' "$T/log"; then ok "a comma list: exit 2"; else bad "a comma list: exit $rc"; fi

# an address another process holds: the start fails, naming it, and nothing is left listening
cat >"$T/hold.py" <<'PY'
import socket, subprocess, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
port = s.getsockname()[1]
args = [a.replace("PORT", str(port)) for a in sys.argv[1:]]
p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=20)
sys.stderr.buffer.write(p.stderr)
print(port, p.returncode)
PY
set -- $(python3 "$T/hold.py" "$BIN" --replay-dir "$STATE" --mapping.file "$MAP" --web.listen-address 127.0.0.1:0 \
	--web.listen-address 127.0.0.1:PORT 2>"$T/log")
if [ "${2:-}" = 1 ] && grep -q "cannot listen on 127.0.0.1:$1" "$T/log" && ! grep -q 'listening on' "$T/log"; then
	ok "an address in use: exit 1, named, nothing served"
else
	bad "an address in use: exit ${2:-?}"
fi

# ---------------------------------------------------------------- --web.systemd-socket
# sd_listen_fds' protocol: the socket on fd 3, LISTEN_FDS=1, LISTEN_PID the shim's own pid (exec
# keeps the harness's pid). The harness prints the port, then becomes the shim.
cat >"$T/activate.py" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
env = dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid()) if sys.argv[1] == "self" else "1")
os.execve(sys.argv[2], sys.argv[2:], env)
PY
python3 "$T/activate.py" self "$BIN" --replay-dir "$STATE" --mapping.file "$MAP" --web.systemd-socket \
	--web.listen-address 127.0.0.1:1 >"$T/port" 2>"$T/log" &
pid=$!
if wait_listening; then
	port=$(head -1 "$T/port")
	if metrics_from "$port"; then ok "--web.systemd-socket: the passed socket serves /metrics"; else bad "--web.systemd-socket: no metrics on $port"; fi
	if grep -q "listening on systemd socket fd 3 (127.0.0.1:$port)" "$T/log"; then ok "--web.systemd-socket: logged as such"; else bad "--web.systemd-socket: log line"; fi
	stop "--web.systemd-socket"
else
	bad "--web.systemd-socket: the shim does not start"
fi
# systemd keeps the socket across restarts: stopping the shim must close its own descriptor only,
# never shut the socket down (that stops it for every holder). This harness holds the socket too, as
# systemd does, starts a shim on it, stops it, checks the socket still listens (a connection is
# accepted on the harness's copy) and that a second shim starts on it and serves.
cat >"$T/restart.py" <<'PY'
import os, signal, socket, sys, time, urllib.request
binary, args = sys.argv[1], sys.argv[2:]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0))
s.listen(16)
port = s.getsockname()[1]
def start(log):
    pid = os.fork()
    if pid == 0:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(fd, 2)
        os.dup2(s.fileno(), 3)
        os.set_inheritable(3, True)
        os.execve(binary, [binary] + args, dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid())))
    return pid
def serves():
    for _ in range(200):
        try:
            return b"slurm_cpus_alloc 42\n" in urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read()
        except OSError:
            time.sleep(0.05)
    return False
def say(good, what):
    print(("ok   " if good else "FAIL ") + what, flush=True)
for n in (1, 2):
    pid = start(sys.argv[0] + ".log")
    say(serves(), "--web.systemd-socket, start %d on the kept socket: serves /metrics" % n)
    os.kill(pid, signal.SIGTERM)
    _, st = os.waitpid(pid, 0)
    say(os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, "--web.systemd-socket, start %d: exits 0 on SIGTERM" % n)
    listening = s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    say(listening == 1, "--web.systemd-socket, after stop %d: the socket still listens (SO_ACCEPTCONN %d)" % (n, listening))
    s.settimeout(5)
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        a, _ = s.accept()
        a.close()
        c.close()
        say(True, "--web.systemd-socket, after stop %d: a connection is accepted on it" % n)
    except OSError as e:
        say(False, "--web.systemd-socket, after stop %d: no connection accepted (%s)" % (n, e))
    s.settimeout(None)
PY
python3 "$T/restart.py" "$BIN" --replay-dir "$STATE" --mapping.file "$MAP" --web.systemd-socket >"$T/restart.out" 2>&1
cp "$T/restart.py.log" "$T/log" 2>/dev/null
while IFS= read -r line; do
	case $line in
	"ok   "*) ok "${line#ok   }" ;;
	"FAIL "*) bad "${line#FAIL }" ;;
	*) echo "     $line" ;;
	esac
done <"$T/restart.out"
grep -q '^ok   --web.systemd-socket, start 2 on the kept socket' "$T/restart.out" || bad "--web.systemd-socket: the restart harness did not reach the second start"

# the sockets of another process (LISTEN_PID is not the shim's): refused, not served
python3 "$T/activate.py" other "$BIN" --replay-dir "$STATE" --mapping.file "$MAP" --web.systemd-socket >"$T/port" 2>"$T/log"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'the sockets passed are not this process' "$T/log"; then ok "--web.systemd-socket, another LISTEN_PID: exit 1"; else bad "--web.systemd-socket, another LISTEN_PID: exit $rc"; fi
# not started by systemd at all
env -u LISTEN_FDS -u LISTEN_PID "$BIN" --replay-dir "$STATE" --mapping.file "$MAP" --web.systemd-socket >/dev/null 2>"$T/log"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'no socket passed by systemd (LISTEN_PID and LISTEN_FDS are not set' "$T/log"; then ok "--web.systemd-socket alone: exit 1, says why"; else bad "--web.systemd-socket alone: exit $rc"; fi
# fd 3 is no socket
LISTEN_FDS=1 sh -c 'LISTEN_PID=$$ exec "$@" 3<VERSION' sh "$BIN" --replay-dir "$STATE" --mapping.file "$MAP" --web.systemd-socket \
	>/dev/null 2>"$T/log"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'fd 3 (socket 1 of LISTEN_FDS 1) is not a socket' "$T/log"; then ok "--web.systemd-socket, fd 3 a file: exit 1"; else bad "--web.systemd-socket, fd 3 a file: exit $rc"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
