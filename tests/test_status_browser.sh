#!/bin/sh
# test_status_browser.sh: the status page at / in a real browser (Debian's chromium, headless), on
# captured cluster states, checking what a person sees there: the text of the DOM chromium built,
# cell by cell, and a screenshot that is not blank.
#   R4 (25.11, slurmrestd): n4 "fail" with its reason "R3 fail busy n4", n5 "drained*" with
#     "R4 down+drain n5", both set by root, and n2 maint, in the not-OK table; sinfo -s's 1/3/1/5;
#     no "guessed" banner; slurm_exporter_shim_node_state_source{source="slurmrestd"} 1.
#   03 (25.11, slurmctld only): the banner that per-node states are guessed, naming the fix
#     (--slurmrestd.url, /usr/share/slurm-exporter-shim/enable-slurmrestd); slurmctld's counters
#     (down 1, draining 1); the self metric says slurmctld-guess; one start-up warning in the log.
#   50,000 nodes (tests/bench/gen_payload.py, tests/bench/gen_rest.py; replayed with slurmrestd): the page under
#     512 KiB (STATUS_PAGE_MAX), sinfo -s's sums, 12,500 not-OK nodes: 50 listed, the rest counted.
# Without chromium it fails (scripts/install-deps.sh test installs it): it never skips silently.
# STATUS_SCREENSHOT=docs/status-page.png keeps the R4 screenshot there.
set -u
cd "$(dirname "$0")/.."
PASS=0 FAIL=0
. tests/lib.sh
SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
FAKE_SLURMCTLD=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
MAPPING=mappings/prometheus-slurm-exporter.json
MIN_INTERVAL=0
TMP=$(mktemp -d)
FAKE_PID= SHIM_PID=
cleanup() { killwait "$SHIM_PID" "$FAKE_PID"; rm -rf "$TMP"; }
trap cleanup EXIT INT TERM

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	bad "chromium not found: this test needs a real browser (scripts/install-deps.sh test installs Debian's chromium)"
	finish
fi
# --no-sandbox: chromium refuses to run as root with its sandbox; the page is our own and has no script
flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir=$TMP/profile"

# dom URL OUT: the DOM chromium built for URL, or fail saying chromium does not start here
dom() {
	if ! "$browser" $flags --dump-dom "$1" >"$2" 2>"$TMP/chromium.log" || ! grep -q '</html>' "$2"; then
		bad "chromium does not start or render here ($browser): $(tail -3 "$TMP/chromium.log" | tr '\n' ' ')"
		return 1
	fi
}

# cells FILE TABLE_ID: the text a person reads in each row of that table, cells joined by " | "
cells() {
	python3 - "$1" "$2" <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self, want):
        super().__init__(); self.want, self.depth, self.rows, self.cell = want, 0, [], None
    def handle_starttag(self, tag, attrs):
        if tag == "table" and dict(attrs).get("id") == self.want: self.depth = 1
        elif self.depth and tag == "table": self.depth += 1
        elif self.depth and tag == "tr": self.rows.append([])
        elif self.depth and tag in ("td", "th"): self.cell = []
    def handle_endtag(self, tag):
        if self.depth and tag == "table": self.depth -= 1
        elif self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(" ".join("".join(self.cell).split())); self.cell = None
    def handle_data(self, d):
        if self.cell is not None: self.cell.append(d)
p = P(sys.argv[2]); p.feed(open(sys.argv[1], encoding="utf-8").read())
for r in p.rows: print(" | ".join(r))
PY
}

# text FILE: the page's visible text (no markup), whitespace collapsed
text() {
	python3 -c 'import html.parser,sys
class P(html.parser.HTMLParser):
    skip=0; out=[]
    def handle_starttag(s,t,a): s.skip+=t in ("style","title","head")
    def handle_endtag(s,t): s.skip-=t in ("style","title","head")
    def handle_data(s,d): s.skip or s.out.append(d)
p=P(); p.feed(open(sys.argv[1],encoding="utf-8").read()); print(" ".join("".join(p.out).split()))' "$1"
}

has_row() { grep -Fxq "$2" "$1"; }

# png_ok FILE: a PNG of the window's size with ink on it (not blank)
png_ok() {
	python3 - "$1" 1280 1400 <<'PY'
import struct, sys, zlib
path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n": sys.exit("not a PNG")
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IHDR": ihdr = struct.unpack(">IIBBBBB", data[pos + 8:pos + 8 + n])
    elif kind == b"IDAT": idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
w, h, depth, ctype = ihdr[:4]
if (w, h) != (want_w, want_h) or depth != 8 or ctype not in (2, 6): sys.exit("unexpected PNG %r" % (ihdr,))
bpp = 4 if ctype == 6 else 3
raw, stride, prev, ink = zlib.decompress(idat), w * bpp, bytearray(w * bpp), 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    ink += sum(1 for x in range(0, stride, bpp * 4) if bytes(line[x:x + 3]) != b"\xff\xff\xff")
    prev = line
if ink < w * h // 400: sys.exit("blank: %d inked samples" % ink)
PY
}

# serve STATE rest|native: fake_slurmctld on STATE (it answers slurmrestd's paths too), the shim
# (with --slurmrestd.url on the same fake for rest), one scrape
serve() {
	STATE=$1 mode=$2
	killwait "$SHIM_PID" "$FAKE_PID"; SHIM_PID= FAKE_PID=
	start_fake || { bad "fake_slurmctld does not start on $STATE"; return 1; }
	set --
	[ "$mode" = rest ] && set -- --slurmrestd.url "http://127.0.0.1:$FAKE_PORT"
	start_shim_with 100 "$@" || { bad "the shim does not start: $(cat "$TMP/shim.log")"; return 1; }
	curl -s "$URL" >"$TMP/metrics.txt"
	PAGE="http://127.0.0.1:$PORT/"
}

# ---- R4 with slurmrestd: the not-OK nodes with their reasons
R4=tests/fixtures/slurm-25.11-rest/R4-downdrain-fail-maint-reserved
if serve $R4 rest && dom "$PAGE" "$TMP/r4.html"; then
	cells "$TMP/r4.html" not-ok >"$TMP/r4.notok"
	check "R4: n4 fail, its reason, set by root at 10:42:32" has_row "$TMP/r4.notok" "n4 | fail | R3 fail busy n4 | root | 2026-12-01 10:42:32 UTC"
	check "R4: n5 drained*, its reason, set by root at 10:44:14" has_row "$TMP/r4.notok" "n5 | drained* | R4 down+drain n5 | root | 2026-12-01 10:44:14 UTC"
	check "R4: n2 maint listed (no reason)" has_row "$TMP/r4.notok" "n2 | maint |  |  | "
	check "R4: only the three not-OK nodes" test "$(grep -c '^n[0-9]' "$TMP/r4.notok")" -eq 3
	text "$TMP/r4.html" >"$TMP/r4.txt"
	check "R4: Nodes not OK: 3" grep -q "Nodes not OK: 3" "$TMP/r4.txt"
	check "R4: sinfo -s sums 1/3/1/5" grep -q "as sinfo -s sums them: 1/3/1/5" "$TMP/r4.txt"
	cells "$TMP/r4.html" partitions >"$TMP/r4.parts"
	check "R4: partition hidden: 1 node, other (n5)" has_row "$TMP/r4.parts" "hidden | 1 | 0/0/1/1 | 8 | 0 | 8 | 2 | 0"
	cells "$TMP/r4.html" queue >"$TMP/r4.queue"
	check "R4: the queue: 12 pending, 2 running (squeue's)" has_row "$TMP/r4.queue" "12 | 2 | 1 | 0 | 0"
	check "R4: no guessed banner" sh -c "! grep -q 'Per-node states are guessed' '$TMP/r4.txt'"
	check "R4: self metric says slurmrestd" grep -q '^slurm_exporter_shim_node_state_source{source="slurmrestd"} 1$' "$TMP/metrics.txt"
	check "R4: no start-up warning with slurmrestd" sh -c "! grep -q 'guessed from CPU counts' '$TMP/shim.log'"
	shot=${STATUS_SCREENSHOT:-$TMP/r4.png}
	if "$browser" $flags --window-size=1280,1400 --screenshot="$shot" "$PAGE" 2>>"$TMP/chromium.log"; then
		check "R4: the screenshot is a 1280x1400 PNG, not blank" png_ok "$shot"
	else
		bad "R4: chromium takes no screenshot: $(tail -3 "$TMP/chromium.log" | tr '\n' ' ')"
	fi
fi

# ---- 03 without slurmrestd: the states are guessed, and the page says so
S03=tests/fixtures/slurm-25.11/03-drain-down-cancel
if serve $S03 native && dom "$PAGE" "$TMP/03.html"; then
	text "$TMP/03.html" >"$TMP/03.txt"
	check "03: the banner says the states are guessed" grep -q "Per-node states are guessed. slurmrestd is not configured" "$TMP/03.txt"
	check "03: the banner names --slurmrestd.url" grep -q "Fix: add slurmrestd, --slurmrestd.url" "$TMP/03.txt"
	check "03: the banner names enable-slurmrestd" grep -q "/usr/share/slurm-exporter-shim/enable-slurmrestd" "$TMP/03.txt"
	cells "$TMP/03.html" node-states >"$TMP/03.states"
	check "03: slurmctld's counters: down 1" has_row "$TMP/03.states" "down | 1"
	check "03: slurmctld's counters: draining 1" has_row "$TMP/03.states" "draining | 1"
	check "03: no per-node list without slurmrestd" sh -c "! grep -q 'Nodes not OK' '$TMP/03.txt'"
	check "03: self metric says slurmctld-guess" grep -q '^slurm_exporter_shim_node_state_source{source="slurmctld-guess"} 1$' "$TMP/metrics.txt"
	check "03: one start-up warning naming the fix" test "$(grep -c 'guessed from CPU counts.*--slurmrestd.url.*enable-slurmrestd' "$TMP/shim.log")" -eq 1
fi
# ---- 50,000 nodes (tests/bench/gen_payload.py and tests/bench/gen_rest.py, every fourth node drained), replayed
# with slurmrestd: the page stays under its bound (STATUS_PAGE_MAX, src/status.h) with the counts right
BIG=$TMP/nodes-50000
if python3 tests/bench/gen_payload.py --nodes 50000 --out "$BIG" >/dev/null && python3 tests/bench/gen_rest.py nodes 50000 "$BIG/rest_nodes.json"; then
	killwait "$SHIM_PID" "$FAKE_PID"; SHIM_PID= FAKE_PID=
	FAKE_PORT=0 # unused: the shim replays $BIG
	if start_shim_with 300 --replay-dir "$BIG" --slurmrestd.url http://127.0.0.1:9; then
		curl -s -o /dev/null "$URL"
		PAGE="http://127.0.0.1:$PORT/"
		curl -s -o "$TMP/big.curl.html" "$PAGE"
		check "50,000 nodes: the page is under 512 KiB ($(wc -c <"$TMP/big.curl.html") bytes)" test "$(wc -c <"$TMP/big.curl.html")" -lt 524288
		if dom "$PAGE" "$TMP/big.html"; then
			text "$TMP/big.html" >"$TMP/big.txt"
			check "50,000 nodes: sinfo -s sums 25000/12500/12500/50000" grep -q "Nodes: 50000, allocated/idle/other/total as sinfo -s sums them: 25000/12500/12500/50000" "$TMP/big.txt"
			check "50,000 nodes: 12500 not OK, 50 listed and the rest counted" grep -q "Nodes not OK: 12500 .* and 12450 more (the first 50 are listed" "$TMP/big.txt"
			cells "$TMP/big.html" not-ok >"$TMP/big.notok"
			check "50,000 nodes: 50 rows of drained nodes" test "$(grep -c '^node[0-9]* | drained |' "$TMP/big.notok")" -eq 50
		fi
	else
		bad "the shim does not start on 50,000 nodes: $(cat "$TMP/shim.log")"
	fi
else
	bad "tests/bench/gen_payload.py or tests/bench/gen_rest.py failed"
fi
finish
