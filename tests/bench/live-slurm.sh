#!/bin/sh
# tests/bench/live-slurm.sh: what a scrape costs a real slurmctld, measured.
#
# Reuses an installed Slurm 25.11 (it never downloads or builds one), starts a private cluster on
# 127.0.0.1 only (tests/bench/live-lib.sh: its own munged, one slurmctld, four slurmd in multiple-slurmd
# mode, slurmrestd on a unix socket when installed), fills the queue to each RECORDS level with held jobs (the cost of
# a job walk follows job records, not array tasks, so one sbatch per record and no arrays; a held
# job is a record that never runs; the jobs belong to several users, never root: see fill_users),
# and prints slurmctld's CPU time per scrape for these rows:
#   old        the old exporter 0.20's commands: 4 sinfo, 4 squeue, sdiag, argv as
#              /work/shared/reference/legacy-exporter.md lists them
#   shim P s   the shim with its default intervals as at a Prometheus scrape interval of P s (each
#              of PROM_INTERVALS), time-scaled: scrapes P / SHIM_SCALE s apart, and every
#              --slurmctld.*interval* flag at its default (read from --help) / SHIM_SCALE. The
#              row says which job walks each scrape fetched, and checks that against the same
#              scaled run with a fake slurmctld that answers in a millisecond (what real P s
#              scrapes fetch, fetch times being small against P): "MISMATCH" flags a row whose
#              walks differ (walks_match), and the row is measured again at half the scale
#   shim 0     the shim with every interval 0: each scrape fetches every endpoint its table reads
#   /metrics/* each endpoint alone, with curl
#   rest       slurmrestd's /slurm/VERSION/jobs, with slurmrestd's own CPU per request beside
#              (run as root only: slurmrestd refuses to run as SlurmUser, see start_rest)
# CPU is slurmctld's process CPU clock (utime + stime of all its threads, as /proc/PID/stat sums
# them, read in ns) around each run, less slurmctld's idle rate over the run's duration (measured
# before each level): tests/bench/live_cpu.py. Each row is the mean +- sd (min / median / max) over
# SCRAPES runs, /proc/PID/stat's tick count over the row as a check, then the runs themselves. CPU
# time is not inflated by other load on the machine; wall time would be, so none is reported.
# It is not part of scripts/test.sh: it needs an installed Slurm and takes about 20 minutes
# (submitting 20,000 jobs with sbatch alone takes several).
#
# Usage (from the repository root, after make):
#   SLURM_PREFIX=/opt/slurm-25.11 tests/bench/live-slurm.sh
# Environment:
#   SLURM_PREFIX   required: sbin/slurmctld, sbin/slurmd (built with --enable-multiple-slurmd),
#                  bin/sbatch, bin/squeue, bin/sinfo, bin/sdiag, bin/scontrol
#   SLURM_SRC      optional: the Slurm source tree it was built from, to print its git commit
#   MUNGED         munged binary (default: munged on PATH, else /usr/sbin/munged)
#   SHIM_BIN       the shim (default ./slurm-exporter-shim); MAPPING the table it loads
#                  (default mappings/prometheus-slurm-exporter.json)
#   FAKE_SLURMCTLD the fake for the walk reference (default build/tests/fake_slurmctld), serving
#                  FIXTURE (default tests/fixtures/slurm-25.11/02-busy-mix)
#   RECORDS        job record levels, ascending (default "50 5000 20000")
#   ROWS           which rows (default "old shim endpoints rest"; e.g. ROWS=shim for the shim only)
#   SCRAPES        runs per row (default 20); SCRAPE_EVERY seconds from the start of one to the
#                  start of the next for the rows other than "shim P s" (default 0.5)
#   PROM_INTERVALS the Prometheus scrape intervals of the "shim P s" rows (default "15 30")
#   SHIM_SCALE     their time scale (default 10: a 30 s interval is scraped every 3 s); a row whose
#                  walks differ from real P s scrapes is measured again at half the scale, down to
#                  SHIM_MIN_SCALE (default 2)
#   SHIM_SET       interval flags of the "shim P s" rows other than the defaults, for what another
#                  default would cost: SHIM_SET="--slurmctld.jobs.min-interval=90"
#   BASE_PORT      slurmctld's port; slurmd use the next four, the shim BASE_PORT+10, the fake
#                  BASE_PORT+11 (default 16817)
#   FILL_USERS     the accounts that own the jobs when this script runs as root (default: the
#                  first ten with a uid from 1 to 65533 in /etc/passwd; not root: see fill_users)
#   REST_USER      the unprivileged account slurmrestd runs as when this script runs as root
#                  (default daemon; slurmrestd refuses root, SlurmUser and nobody)
#   WORKDIR        state, logs and the config (default: a new directory under /tmp, removed at the
#                  end unless KEEP=1)
# Runs as any user, root included: SlurmUser and SlurmdUser are the user running it. Every daemon
# it started is stopped at exit, by its PID. At the end, a markdown table of the means.
set -eu

SLURM_PREFIX=${SLURM_PREFIX:-}
SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
MAPPING=${MAPPING:-mappings/prometheus-slurm-exporter.json}
FAKE_SLURMCTLD=${FAKE_SLURMCTLD:-build/tests/fake_slurmctld}
FIXTURE=${FIXTURE:-tests/fixtures/slurm-25.11/02-busy-mix}
RECORDS=${RECORDS:-50 5000 20000}
ROWS=${ROWS:-old shim endpoints rest}
SCRAPES=${SCRAPES:-20}
SCRAPE_EVERY=${SCRAPE_EVERY:-0.5}
PROM_INTERVALS=${PROM_INTERVALS:-15 30}
SHIM_SCALE=${SHIM_SCALE:-10}
SHIM_MIN_SCALE=${SHIM_MIN_SCALE:-2}
SHIM_SET=${SHIM_SET:-}
BASE_PORT=${BASE_PORT:-16817}
REST_USER=${REST_USER:-daemon}
KEEP=${KEEP:-0}

LIVE_NAME=live-slurm
# shellcheck source=tests/bench/live-lib.sh
. "$(dirname "$0")/live-lib.sh"

[ -n "$SLURM_PREFIX" ] || die "set SLURM_PREFIX to an installed Slurm 25.11 (this script does not build one)"
for b in sbin/slurmctld sbin/slurmd bin/sbatch bin/squeue bin/sinfo bin/sdiag bin/scontrol; do
	[ -x "$SLURM_PREFIX/$b" ] || die "$SLURM_PREFIX/$b not found"
done
MUNGED=${MUNGED:-$(command -v munged || echo /usr/sbin/munged)}
[ -x "$MUNGED" ] || die "munged not found (set MUNGED)"
[ -x "$SHIM_BIN" ] || die "$SHIM_BIN not found (run make first)"
[ -x "$FAKE_SLURMCTLD" ] || die "$FAKE_SLURMCTLD not found (run make first)"
[ -r "$MAPPING" ] || die "$MAPPING not found (run from the repository root)"
[ -d "$FIXTURE" ] || die "$FIXTURE not found (run from the repository root)"
command -v curl >/dev/null || die "curl not found"
command -v python3 >/dev/null || die "python3 not found"
MAPPING=$(cd "$(dirname "$MAPPING")" && pwd)/$(basename "$MAPPING")
LIVE_CPU="python3 $(cd "$(dirname "$0")" && pwd)/live_cpu.py"

live_setup
CTLD_PORT=$BASE_PORT
SHIM_PORT=$((BASE_PORT + 10))
FAKE_PORT=$((BASE_PORT + 11))
CTLD=http://127.0.0.1:$CTLD_PORT
TSV=$W/means.tsv
: >"$TSV"

want() { case " $ROWS " in *" $1 "*) return 0 ;; esac; return 1; }

# --- the cluster (tests/bench/live-lib.sh) ------------------------------------------------------------
start_slurm() {
	start_ctld slurmctld "$CONF"
	start_slurmds
	wait_metrics "$CTLD" "$CTLD_PID"
	wait_idle
}

# slurmrestd on a unix socket with rest_auth/local (start_rest in tests/bench/live-lib.sh): no rest row
# when it does not start or names no /slurm/ version in /openapi/v3
start_rest_row() {
	start_rest "unix:$REST_SOCK" rest_auth/local
	[ -n "$REST_PID" ] || return 0
	rest_version --max-time 30
	if [ -z "$REST_VERSION" ]; then
		echo "live-slurm: slurmrestd names no /slurm/ version in /openapi/v3; no rest row" >&2
		REST_PID=""
	fi
}

# --- measuring --------------------------------------------------------------------------------
# slurmctld's CPU per second while idle, over the time a row takes (tests/bench/live_cpu.py)
IDLE_RATE=0
measure_idle() {
	IDLE_RATE=$($LIVE_CPU idle "$CTLD_PID" "$(awk -v n="$SCRAPES" -v e="$SCRAPE_EVERY" 'BEGIN { print n * e }')")
	echo "  (slurmctld idle: $IDLE_RATE ms of CPU per second, subtracted from each run)"
}

# measure NAME EVERY [--also PID] -- COMMAND...: run COMMAND SCRAPES times, EVERY s apart; print
# slurmctld's CPU per run and keep the mean for the summary table
measure() {
	name=$1 every=$2
	shift 2
	$LIVE_CPU run "$CTLD_PID" "$IDLE_RATE" "$SCRAPES" "$every" "$name" "$@" | tee "$W/row.txt"
}

# keep_row NAME: the last row's mean goes into the summary table
keep_row() {
	awk -v n="$LEVEL" -v name="$1" 'NR == 1 { for (i = 2; i <= NF; i++) if ($i == "+-") break
		printf "%s\t%s\t%s\n", n, name, $(i - 1) }' "$W/row.txt" >>"$TSV"
}

# mrow NAME EVERY ...: measure and keep
mrow() {
	measure "$@"
	keep_row "$1"
}

# The old exporter 0.20's commands for one scrape, argv exactly as it runs them (its collectors
# run them in parallel; the CPU is the same in series), as a script: one run, one command.
write_old_exporter() {
	cat >"$W/old-exporter.sh" <<EOF
#!/bin/sh
export SLURM_CONF=$CONF PATH=$SLURM_PREFIX/bin:\$PATH
sinfo -h "-o %C"
sinfo -h "-o %D,%T"
sinfo -h -N -O NodeList,AllocMem,Memory,CPUsState,StateLong
sinfo -h -o%R,%C
squeue -a -r -h -o%P --states=PENDING
squeue -a -r -h "-o %A,%T,%r" --states=all
squeue -a -r -h "-o %A|%a|%T|%C"
squeue -a -r -h "-o %A|%u|%T|%C"
sdiag
EOF
	chmod +x "$W/old-exporter.sh"
}

# The shim's interval flags with their defaults, from its --help: "--slurmctld.X SECONDS ...
# default N)" for every slurmctld flag with "interval" in its name, as "FLAG DEFAULT" lines.
# SHIM_SET ("--flag=SECONDS ...") replaces defaults: what another default would cost.
shim_intervals() {
	"$SHIM_BIN" --help 2>&1 |
		sed -n 's/^ *\(--slurmctld\.[a-z.-]*interval[a-z.-]*\) SECONDS.*default \([0-9.]*\)).*/\1 \2/p' |
		awk -v set="$SHIM_SET" 'BEGIN { n = split(set, s, " "); for (i = 1; i <= n; i++) { split(s[i], kv, "="); v[kv[1]] = kv[2] } }
			{ if ($1 in v) $2 = v[$1]; print }'
}

# shim_flags SCALE: every interval flag at its default divided by SCALE (0: every interval 0)
shim_flags() {
	shim_intervals | awk -v s="$1" '{ printf "%s %s ", $1, (s == 0 ? 0 : $2 / s) }'
}

# The shim's scrapes of a row are appended to $W/scrapes.txt. walks: which job-walking endpoints
# each scrape fetched, from the fetch counters of consecutive scrapes (j = /metrics/jobs,
# p = partitions, u = jobs-users-accts, - = none), e.g. "pju - p u p u"; then the totals of the
# last scrape, e.g. "jobs 10, nodes 20, ...".
walks() {
	sed -n 's/^slurm_exporter_shim_upstream_fetches_total{endpoint="\([^"]*\)"} \([0-9]*\)$/\1 \2/p' \
		"$W/scrapes.txt" | awk '
		BEGIN { split("jobs partitions jobs-users-accts", ep, " "); split("j p u", letter, " ") }
		function scrape(   s, i) {
			s = ""
			for (i = 1; i <= 3; i++)
				if (cur[ep[i]] > last[ep[i]]) s = s letter[i]
			seq = seq (seq == "" ? "" : " ") (s == "" ? "-" : s)
			for (i in cur) last[i] = cur[i]
			split("", cur)
			n = 0
		}
		($1 in cur) { scrape() }
		{ cur[$1] = $2; names[++n] = $1 }
		END {
			for (i = 1; i <= n; i++) t = t (i > 1 ? ", " : "") names[i] " " cur[names[i]]
			scrape()
			print seq " (" t ")"
		}'
}

# walks_match GOT REF: true when two walks lines (above) make the same number of walks of each
# endpoint, give or take one, and no scrape after the first makes more walks in GOT than in REF.
# Which scrape a walk falls on is left free: an interval that is a whole number of scrape
# intervals makes an answer due just as the scrape comes, and a few ms of timing decide whether
# it is fetched on that scrape or the next, live or not.
walks_match() {
	awk -v got="$1" -v ref="$2" '
		function load(s, c,   n, t, i, m) {
			sub(/ \(.*/, "", s)
			n = split(s, t, " ")
			for (i = 1; i <= n; i++) {
				c["j"] += gsub(/j/, "j", t[i])
				c["p"] += gsub(/p/, "p", t[i])
				c["u"] += gsub(/u/, "u", t[i])
				if (i > 1 && t[i] != "-" && length(t[i]) > m) m = length(t[i])
			}
			return m
		}
		BEGIN {
			mg = load(got, g)
			mr = load(ref, r)
			split("j p u", e, " ")
			for (i = 1; i <= 3; i++)
				if (g[e[i]] - r[e[i]] > 1 || r[e[i]] - g[e[i]] > 1) exit 1
			exit (mg > mr)
		}'
}

# one scrape of the shim, for sh -c
SCRAPE="exec curl -sf http://127.0.0.1:$SHIM_PORT/metrics >>'$W/scrapes.txt'"

# The walks of real P s scrapes: the same scaled run against the fake slurmctld, which answers in
# about a millisecond, scrapes 0.5 s apart (scale P / 0.5). Sets REF_P for each P.
reference_walks() {
	"$FAKE_SLURMCTLD" --port "$FAKE_PORT" --dir "$FIXTURE" >"$W/log/fake.out" 2>&1 &
	fake=$!
	PIDS="$PIDS $fake"
	sleep 0.5
	for p in $PROM_INTERVALS; do
		scale=$(awk -v p="$p" 'BEGIN { print p / 0.5 }')
		# shellcheck disable=SC2046 # the flags are words
		start_shim "http://127.0.0.1:$FAKE_PORT" $(shim_flags "$scale")
		: >"$W/scrapes.txt"
		$LIVE_CPU run "$fake" 0 "$SCRAPES" 0.5 "reference $p s" -- sh -c "$SCRAPE" >/dev/null
		stop_shim
		eval "REF_$p=\"$(walks)\""
		echo "  at $p s, the walks of $SCRAPES scrapes: $(eval echo "\"\$REF_$p\"")"
	done
	kill "$fake" 2>/dev/null || true
	wait "$fake" 2>/dev/null || true
}

# shim_row P: the shim's defaults as at a real P s, time-scaled by SHIM_SCALE. A fetch's own
# duration is not scaled: an answer's age counts from the end of its fetch, so a walk that takes
# 0.5 s counts as 5 s at scale 10 and can move a walk to another scrape. Then the row is measured
# again at half the scale, down to SHIM_MIN_SCALE; a row that never matches is kept, marked.
shim_row() {
	p=$1 scale=$SHIM_SCALE
	ref=$(eval echo "\"\$REF_$p\"")
	while :; do
		every=$(awk -v p="$p" -v s="$scale" 'BEGIN { print p / s }')
		# shellcheck disable=SC2046 # the flags are words
		start_shim "$CTLD" $(shim_flags "$scale")
		: >"$W/scrapes.txt"
		measure "$SHIM_ROW at $p s (scale $scale)" "$every" -- sh -c "$SCRAPE"
		stop_shim
		got=$(walks)
		if walks_match "$got" "$ref"; then
			echo "  #   walks: $got; at a real $p s: $ref (the same, see walks_match)"
			keep_row "$SHIM_ROW at $p s"
			return
		fi
		echo "  #   MISMATCH: walks $got; at a real $p s: $ref"
		scale=$(awk -v s="$scale" -v m="$SHIM_MIN_SCALE" 'BEGIN { if (s / 2 >= m) print s / 2 }')
		if [ -z "$scale" ]; then
			keep_row "$SHIM_ROW at $p s (walks as at a real $p s: MISMATCH)"
			return
		fi
	done
}

SHIM_ROW="shim defaults${SHIM_SET:+ but $SHIM_SET}"
shim_rows() {
	for p in $PROM_INTERVALS; do
		shim_row "$p"
	done
	# shellcheck disable=SC2046 # the flags are words
	start_shim "$CTLD" $(shim_flags 0)
	: >"$W/scrapes.txt"
	mrow "shim, every interval 0" "$SCRAPE_EVERY" -- sh -c "$SCRAPE"
	stop_shim
	echo "  #   walks: $(walks)"
}

# --- run --------------------------------------------------------------------------------------
start_munge
write_conf
start_slurm
write_old_exporter
want rest && start_rest_row
echo "tests/bench/live-slurm.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(uname -srm), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sort -u | paste -sd/ -))"
echo "Slurm: $("$SLURM_PREFIX/sbin/slurmctld" -V)${SLURM_SRC:+, commit $(git -C "$SLURM_SRC" rev-parse HEAD 2>/dev/null)}"
echo "shim: $("$SHIM_BIN" --version | head -n 1)$(git rev-parse --short HEAD 2>/dev/null | sed 's/^/, commit /')"
echo "shim intervals of the 'shim P s' rows (s): $(shim_intervals | paste -sd, - | sed 's/,/, /g')"
echo "slurmctld CPU per run, ms: mean +- sd (min / median / max) over $SCRAPES runs; 'stat': the mean" \
	"from /proc/PID/stat's ticks over the row"
if want shim; then
	echo
	echo "walks of the 'shim P s' rows at a real P s scrape interval (scaled run against $FAKE_SLURMCTLD):"
	reference_walks
fi
for n in $RECORDS; do
	fill_to "$n"
	LEVEL=$(records)
	echo
	echo "$LEVEL job records:"
	measure_idle
	want old && mrow "old exporter (4 sinfo, 4 squeue, sdiag)" "$SCRAPE_EVERY" -- "$W/old-exporter.sh"
	want shim && shim_rows
	if want endpoints; then
		for ep in jobs partitions jobs-users-accts nodes scheduler; do
			mrow "/metrics/$ep alone" "$SCRAPE_EVERY" -- curl -sf -o /dev/null "$CTLD/metrics/$ep"
		done
	fi
	if want rest && [ -n "$REST_PID" ]; then
		mrow "slurmrestd /slurm/$REST_VERSION/jobs" "$SCRAPE_EVERY" --also "$REST_PID" -- \
			curl -sf -o /dev/null --unix-socket "$REST_SOCK" "http://localhost/slurm/$REST_VERSION/jobs"
	fi
done
echo
echo "Means (ms of slurmctld CPU per scrape):"
awk -F '\t' '
	!($1 in seen_l) { seen_l[$1] = 1; levels[++nl] = $1 }
	!($2 in seen_r) { seen_r[$2] = 1; rows[++nr] = $2 }
	{ v[$1, $2] = $3 }
	END {
		printf "| row |"; for (i = 1; i <= nl; i++) printf " %s records |", levels[i]; print ""
		printf "|---|"; for (i = 1; i <= nl; i++) printf "---:|"; print ""
		for (r = 1; r <= nr; r++) {
			printf "| %s |", rows[r]
			for (i = 1; i <= nl; i++) printf " %s |", ((levels[i], rows[r]) in v ? v[levels[i], rows[r]] : "")
			print ""
		}
	}' "$TSV"
