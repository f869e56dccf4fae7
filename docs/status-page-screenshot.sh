#!/bin/sh
# The status page at / in a real headless browser (Debian's chromium): start tests/fake_slurmctld
# on a capture with /metrics/jobs failing (HTTP 500), the shim against it, scrape /metrics once,
# then take a screenshot of / and check it: a PNG of the window's size that is not blank (many
# non-white pixels, several colours), and the DOM chromium built holds the sources table with an
# up and a down endpoint. Not part of scripts/test.sh (chromium is heavy); see tests/README.md.
#   docs/status-page-screenshot.sh [OUT.png [CAPTURE_DIR]]
# Needs: make (the shim and build/tests/fake_slurmctld), chromium (apt-get install chromium),
# curl, python3. Exit 0 when the checks pass.
set -eu
cd "$(dirname "$0")/.."
out=${1:-/tmp/shim-status-page.png}
cap=${2:-tests/fixtures/slurm-25.11/03-drain-down-cancel}
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "status-page-screenshot: chromium not found (apt-get install chromium)" >&2; exit 2; }
make -s ./slurm-exporter-shim build/tests/fake_slurmctld
tmp=$(mktemp -d)
fake_pid= shim_pid=
cleanup() {
	[ -z "$shim_pid" ] || kill "$shim_pid" 2>/dev/null || true
	[ -z "$fake_pid" ] || kill "$fake_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() {
	i=0
	until curl -s -o /dev/null "http://127.0.0.1:$1/"; do
		i=$((i + 1)); [ $i -lt 200 ] || { echo "status-page-screenshot: nothing on port $1" >&2; exit 1; }
		sleep 0.05
	done
}
fport=$(free_port)
build/tests/fake_slurmctld --port "$fport" --dir "$cap" --fault 500 --fault-endpoint jobs 2>"$tmp/fake.log" &
fake_pid=$!
wait_up "$fport"
sport=$(free_port)
./slurm-exporter-shim --web.listen-address "127.0.0.1:$sport" --slurmctld.url "http://127.0.0.1:$fport" \
	--mapping.file mappings/prometheus-slurm-exporter.json 2>"$tmp/shim.log" &
shim_pid=$!
wait_up "$sport"
curl -s -o /dev/null "http://127.0.0.1:$sport/metrics"
url="http://127.0.0.1:$sport/"
# --no-sandbox: chromium refuses to run as root with its sandbox; the page is our own, no script
flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir=$tmp/profile"
"$browser" $flags --window-size=1280,1600 --screenshot="$out" "$url" 2>"$tmp/chromium.log" ||
	{ cat "$tmp/chromium.log" >&2; exit 1; }
"$browser" $flags --dump-dom "$url" >"$tmp/dom.html" 2>>"$tmp/chromium.log"
fail=0
grep -q '<td class="up">up</td>' "$tmp/dom.html" || { echo "FAIL: the DOM has no endpoint up" >&2; fail=1; }
grep -q '/metrics/jobs: HTTP status 500' "$tmp/dom.html" || { echo "FAIL: the DOM lacks the jobs endpoint's reason" >&2; fail=1; }
python3 - "$out" 1280 1600 <<'PY' || fail=1
import struct, sys, zlib
path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = ihdr
if (w, h) != (want_w, want_h):
    sys.exit("FAIL: %dx%d, not the window's %dx%d" % (w, h, want_w, want_h))
assert depth == 8 and ctype in (2, 6) and interlace == 0, "unexpected PNG format %r" % (ihdr,)
bpp = 4 if ctype == 6 else 3
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, ink = bytearray(stride), set(), 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):  # undo the PNG row filter
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp * 4):  # every 4th pixel is plenty
        px = bytes(line[x:x + 3])
        colours.add(px)
        ink += px != b"\xff\xff\xff"
    prev = line
sampled = w * h // 4
print("status-page-screenshot: %s %dx%d, %d colours, %.1f%% non-white" % (path, w, h, len(colours), 100.0 * ink / sampled))
if len(colours) < 8 or ink < sampled // 100:
    sys.exit("FAIL: the screenshot is (nearly) blank")
PY
[ $fail -eq 0 ] && echo "status-page-screenshot: ok ($out)"
exit $fail
