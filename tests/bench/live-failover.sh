#!/bin/sh
# shellcheck disable=SC2317 # the cycle_* functions are called as "cycle_$c"
# tests/bench/live-failover.sh: the live checks of the hardening (docs/operations.md, "Failover and
# failback, measured live") on a real Slurm (an expired or forged
# slurmrestd token; failover and failback of two slurmctld), measured and checked.
#
# Reuses an installed Slurm 25.11.7 or later (it never downloads or builds one) and starts a
# private cluster on loopback addresses only (tests/bench/live-lib.sh: its own munged, four slurmd in
# multiple-slurmd mode), here with two controllers: SlurmctldHost=ctla(127.0.0.2) and
# ctlb(127.0.0.3), on the same port, sharing StateSaveLocation, SlurmctldTimeout=CTLD_TIMEOUT.
# slurmctld finds its own SlurmctldHost entry by its host name, and with NoCtldInAddrAny listens
# on the address that name resolves to, so each one runs in its own UTS and mount namespace
# (unshare --uts --mount, root only) named ctla or ctlb, with a private /etc/hosts (the host's
# plus "127.0.0.2 ctla" and "127.0.0.3 ctlb") bound over /etc/hosts; the host's files and name
# do not change.
# Both have MetricsType=metrics/openmetrics and AuthAltTypes=auth/jwt (a new jwt_key).
#
# 1. The standby's answer, for reference: status line and headers of ctlb's /metrics/nodes,
#    /metrics/jobs?x=1 and /metrics (303 to SlurmctldHost[0], the same path and query).
# 2. Token (when slurmrestd is installed): slurmrestd on 127.0.0.1:BASE_PORT+20 with
#    rest_auth/jwt, as REST_USER; a token from `scontrol token lifespan=TOKEN_LIFESPAN
#    username=TOKEN_USER`; the shim given --slurmrestd.url, --slurmrestd.auth.token-file and
#    --slurmrestd.auth.user (slurmrestd intervals 0, --slurmrestd.jobs). For each state of the
#    token file (valid, expired: the same token after its lifespan, forged: signed with another
#    key, empty), it records what slurmrestd answers /nodes, /jobs, /diag and /shares with that
#    token (and /nodes with none), the shim's slurm_exporter_shim_http_status and up for each
#    slurmrestd document, the shim's log lines and the status page's slurmrestd lines. Checks:
#    for expired and forged, the log (the failures logged in that state, or the last one logged
#    when nothing new was) and the status page name the token ("token ... expired or rejected /
#    not accepted"); no token string ever appears in a log, a page or a metric.
# 3. Failover and failback: three shims at their defaults, one given ctla's URL only ("one URL",
#    one-url), one given ctlb's URL only ("one URL, standby", one-url-standby: while ctla is
#    primary, every answer of ctlb is a 303 to ctla) and one given both ("two URLs", two-urls),
#    each scraped every second with X-Prometheus-Scrape-Timeout-Seconds: 10 (tests/bench/live_failover.py watch), while each controller's /metrics/scheduler is
#    probed twice a second without following redirects (which one is primary when). The cycles
#    (CYCLES, in order):
#      crash     kill -9 ctla; ctlb takes over (after SlurmctldTimeout); restart ctla (it asks
#                ctlb to relinquish): failback
#      takeover  `scontrol takeover`: ctla saves its state and exits, ctlb takes control at
#                once; restart ctla: failback
#      hang      SIGSTOP ctla (it accepts connections and answers nothing); ctlb takes over;
#                SIGCONT ctla (it reasserts itself as primary)
#    each phase held HOLD s once reached. The shims' mapping is the shipped table plus one row,
#    live_failover_scheduler_since (slurm_last_proc_req_start: which controller process a served
#    scheduler answer came from). The report (tests/bench/live_failover.py report) lists every scrape:
#    duration, status, the controller the shim says answered, where each served endpoint's
#    answer came from, and whether the scrape mixes controllers; then a markdown table per shim:
#    over the run and per cycle: scrapes, not 200, 200 with an endpoint down, longest run not 200,
#    max duration, scrapes mixing controllers, series disagreeing, seconds from the cycle's start
#    to the first scrape answered by ctlb, then by ctla again. Checks: no
#    shim (one URL, one URL at the standby, two URLs) ever mixes controllers; no scrape takes
#    longer than the 10 s scrape timeout.
#
# It is not part of scripts/test.sh: it needs an installed Slurm, root (namespaces, slurmrestd
# as REST_USER) and about 5 minutes.
#
# Usage (from the repository root, after make, as root):
#   SLURM_PREFIX=/opt/slurm-25.11 tests/bench/live-failover.sh 2>&1 | tee failover.txt
# Environment:
#   SLURM_PREFIX   required: sbin/slurmctld, sbin/slurmd (--enable-multiple-slurmd), bin/scontrol,
#                  bin/sbatch, bin/sinfo; sbin/slurmrestd for the token part
#   MUNGED         munged binary (default: munged on PATH, else /usr/sbin/munged)
#   SHIM_BIN       the shim (default ./slurm-exporter-shim); MAPPING the table (default
#                  mappings/prometheus-slurm-exporter.json; the live row is added to a copy)
#   PARTS          which parts (default "standby token failover")
#   CYCLES         failover cycles (default "crash takeover hang"); HOLD s per phase (default 20);
#                  WARM s of scrapes before the first cycle (default 10)
#   CTLD_TIMEOUT   SlurmctldTimeout (default 6)
#   TOKEN_LIFESPAN the token's lifespan in s (default 20); TOKEN_USER its user (default daemon)
#   REST_USER      the account slurmrestd runs as (default daemon)
#   BASE_PORT      slurmctld's port on 127.0.0.2 and 127.0.0.3; slurmd use the next four (on
#                  127.0.0.1), the failover shims BASE_PORT+10, +12 and +16, the token
#                  part's BASE_PORT+14, slurmrestd BASE_PORT+20
#                  (default 17817)
#   WORKDIR, KEEP  as tests/bench/live-slurm.sh (KEEP=1 keeps the directory: logs, scrapes, probes)
# Exit status: 0 when every check passed, 1 otherwise (each check prints "check ok" or
# "check FAILED"). Every daemon it started is stopped at exit, by its PID.
set -eu

SLURM_PREFIX=${SLURM_PREFIX:-}
SHIM_BIN=${SHIM_BIN:-./slurm-exporter-shim}
MAPPING=${MAPPING:-mappings/prometheus-slurm-exporter.json}
PARTS=${PARTS:-standby token failover}
CYCLES=${CYCLES:-crash takeover hang}
HOLD=${HOLD:-20}
WARM=${WARM:-10}
CTLD_TIMEOUT=${CTLD_TIMEOUT:-6}
TOKEN_LIFESPAN=${TOKEN_LIFESPAN:-20}
TOKEN_USER=${TOKEN_USER:-daemon}
REST_USER=${REST_USER:-daemon}
BASE_PORT=${BASE_PORT:-17817}
KEEP=${KEEP:-0}

LIVE_NAME=live-failover
# shellcheck source=tests/bench/live-lib.sh
. "$(dirname "$0")/live-lib.sh"

[ -n "$SLURM_PREFIX" ] || die "set SLURM_PREFIX to an installed Slurm 25.11.7 or later (this script does not build one)"
for b in sbin/slurmctld sbin/slurmd bin/scontrol bin/sbatch bin/sinfo; do
	[ -x "$SLURM_PREFIX/$b" ] || die "$SLURM_PREFIX/$b not found"
done
[ "$(id -u)" = 0 ] || die "run as root: each slurmctld needs its own host name (unshare --uts --mount)"
MUNGED=${MUNGED:-$(command -v munged || echo /usr/sbin/munged)}
[ -x "$MUNGED" ] || die "munged not found (set MUNGED)"
[ -x "$SHIM_BIN" ] || die "$SHIM_BIN not found (run make first)"
[ -r "$MAPPING" ] || die "$MAPPING not found (run from the repository root)"
for c in curl python3 unshare setpriv mount; do
	command -v "$c" >/dev/null || die "$c not found"
done
SHIM_BIN=$(cd "$(dirname "$SHIM_BIN")" && pwd)/$(basename "$SHIM_BIN")
HELPER="python3 $(cd "$(dirname "$0")" && pwd)/live_failover.py"

want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

live_setup
CTL_A=http://127.0.0.2:$BASE_PORT
CTL_B=http://127.0.0.3:$BASE_PORT
REST_PORT=$((BASE_PORT + 20))
FAILED=0

check() { # check WHAT STATUS: report one check (STATUS 0: ok)
	if [ "$2" = 0 ]; then
		echo "check ok: $1"
	else
		echo "check FAILED: $1"
		FAILED=1
	fi
}

# --- the cluster: two controllers ------------------------------------------------------------
mkdir -p "$W/jwt"
dd if=/dev/urandom of="$W/jwt/jwt.key" bs=32 count=1 2>/dev/null
chmod 600 "$W/jwt/jwt.key"
CLUSTER=livefail
CTLD_HOSTS="SlurmctldHost=ctla(127.0.0.2)
SlurmctldHost=ctlb(127.0.0.3)"
CONF_EXTRA="SlurmctldTimeout=$CTLD_TIMEOUT
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$W/jwt/jwt.key"
write_conf
# the backup's own copy: its own PID file (a slurmctld kills the PID its PID file names) and log
CONF_B=$W/slurm-b.conf
sed -e "s|^SlurmctldPidFile=.*|SlurmctldPidFile=$W/run/slurmctld-b.pid|" \
	-e "s|^SlurmctldLogFile=.*|SlurmctldLogFile=$W/log/slurmctld-b.log|" "$CONF" >"$CONF_B"

# the controllers' /etc/hosts, bound over /etc/hosts in their own mount namespace
{
	cat /etc/hosts
	printf '127.0.0.2 ctla\n127.0.0.3 ctlb\n'
} >"$W/hosts"

# start_controller a|b: slurmctld in its own UTS and mount namespace, named ctla or ctlb, with
# $W/hosts as /etc/hosts; A_PID is ctla's
start_controller() {
	if [ "$1" = a ]; then conf=$CONF; else conf=$CONF_B; fi
	# shellcheck disable=SC2016 # $0, $1 and $@ are the inner shell's
	start_ctld "slurmctld-$1" "$conf" unshare --uts --mount --propagation private \
		sh -c 'mount --bind "$1" /etc/hosts && hostname "$0" && shift && exec "$@"' "ctl$1" "$W/hosts"
	if [ "$1" = a ]; then A_PID=$CTLD_PID; fi # ctlb's is in PIDS, and never signalled
}

# code URL: the HTTP status of URL/metrics/scheduler, redirects not followed (000: no answer)
code() {
	curl -s -o /dev/null -m 3 -w '%{http_code}' "$1/metrics/scheduler" || true
}

# wait_codes A B [TRIES]: until ctla answers A and ctlb answers B (patterns: '3??' is any redirect)
wait_codes() {
	i=0
	while :; do
		a=$(code "$CTL_A") b=$(code "$CTL_B")
		# shellcheck disable=SC2254 # the arguments are patterns
		case "$a:$b" in
		$1:$2) return 0 ;;
		esac
		i=$((i + 1))
		[ $i -lt "${3:-120}" ] || {
			echo "$LIVE_NAME: after ${3:-120} tries, ctla answers $a and ctlb $b (wanted $1 and $2)" >&2
			return 1
		}
		sleep 1
	done
}

start_munge
start_controller a
wait_metrics "$CTL_A" "$A_PID"
start_controller b
wait_codes 200 '3??' 60 || die "ctlb does not stand by (see $W/log/slurmctld-b.log)"
start_slurmds
wait_idle

# a few held jobs of two users (not root) in two accounts, so the job walks have series
chmod 755 "$W" "$W/munge"
USERS=$(awk -F: '$3 >= 1 && $3 < 65534 { print $1 }' /etc/passwd | head -n 2)
for u in $USERS; do
	for a in acct1 acct2 acct3; do
		SLURM_CONF=$CONF setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups \
			"$SLURM_PREFIX/bin/sbatch" --hold -A "$a" -t 10 -D /tmp -o /dev/null -e /dev/null --wrap true >/dev/null
	done
done

echo "tests/bench/live-failover.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "Slurm: $("$SLURM_PREFIX/sbin/slurmctld" -V)"
echo "shim: $("$SHIM_BIN" --version | head -n 1)$(git rev-parse --short HEAD 2>/dev/null | sed 's/^/, commit /')"
echo "controllers: ctla $CTL_A (SlurmctldHost[0]), ctlb $CTL_B; SlurmctldTimeout=$CTLD_TIMEOUT"

# headers URL: the status line and headers of one GET of URL (Date lines dropped)
headers() {
	curl -s -D - -o /dev/null -m 3 "$1" | tr -d '\r' | grep -v '^Date:' | sed '/^$/d; s/^/    /'
}

# --- 1. the standby's answer ------------------------------------------------------------------
if want standby; then
	echo
	echo "== 1. the standby's answer (ctlb while ctla is primary)"
	for p in /metrics/nodes "/metrics/jobs?x=1" /metrics; do
		echo "  GET $CTL_B$p:"
		headers "$CTL_B$p"
	done
fi

# --- 2. the token ------------------------------------------------------------------------------
# the first error message of a slurmrestd JSON answer, on one line
rest_error() {
	python3 -c 'import json,sys
try:
    e = json.load(sys.stdin).get("errors") or []
    print("; ".join("%s (%s)" % (x.get("description", ""), x.get("error", "")) for x in e[:1]))
except Exception as ex:
    print("not JSON")' 2>/dev/null
}

# rest_codes TOKEN: what slurmrestd answers each document with TOKEN (none: no token header)
rest_codes() {
	for doc in nodes jobs diag shares; do
		if [ "$1" = none ]; then
			# shellcheck disable=SC2086 # REST_CURL is words
			c=$(curl -s -o "$W/rest.body" -m 10 -w '%{http_code}' $REST_CURL/slurm/$REST_VERSION/$doc || true)
		else
			# shellcheck disable=SC2086 # REST_CURL is words
			c=$(curl -s -o "$W/rest.body" -m 10 -w '%{http_code}' -H "X-SLURM-USER-TOKEN: $1" \
				-H "X-SLURM-USER-NAME: $TOKEN_USER" $REST_CURL/slurm/$REST_VERSION/$doc || true)
		fi
		echo "    /$doc: $c $(rest_error <"$W/rest.body")"
		[ "$1" != none ] || break
	done
}

# forged: a JWT with the right claims, signed with another key
forge() {
	python3 -c 'import base64,hashlib,hmac,json,os,sys,time
b = lambda d: base64.urlsafe_b64encode(d).rstrip(b"=").decode()
h = b(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
p = b(json.dumps({"sun": sys.argv[1], "iat": int(time.time()), "exp": int(time.time()) + 3600}).encode())
print(h + "." + p + "." + b(hmac.new(os.urandom(32), (h + "." + p).encode(), hashlib.sha256).digest()))' "$TOKEN_USER"
}

TOKENS="" # every token written, for the leak check
token_part() {
	echo
	echo "== 2. slurmrestd with an expired, a forged and no token"
	[ -x "$SLURM_PREFIX/sbin/slurmrestd" ] || {
		echo "  no $SLURM_PREFIX/sbin/slurmrestd: skipped"
		return 0
	}
	start_rest "127.0.0.1:$REST_PORT" rest_auth/jwt
	[ -n "$REST_PID" ] || die "slurmrestd does not start (see $W/log/slurmrestd.out)"
	tok=$(slurm scontrol token lifespan="$TOKEN_LIFESPAN" username="$TOKEN_USER" | sed -n 's/^SLURM_JWT=//p')
	[ -n "$tok" ] || die "scontrol token gave no token (see $W/log/slurmctld.log)"
	born=$(date +%s)
	TOKENS="$tok"
	rest_version -H "X-SLURM-USER-TOKEN: $tok" -H "X-SLURM-USER-NAME: $TOKEN_USER"
	[ -n "$REST_VERSION" ] || die "slurmrestd names no /slurm/ version in /openapi/v3"
	echo "  slurmrestd $REST_CURL (rest_auth/jwt, as $REST_USER), $REST_VERSION; token user $TOKEN_USER, lifespan $TOKEN_LIFESPAN s"
	printf '%s\n' "$tok" >"$W/token"
	chmod 600 "$W/token"
	SHIM_PORT=$((BASE_PORT + 14)) SHIM_LOG=$W/log/shim-token.log SHIM_LOG_LEVEL=info
	: >"$SHIM_LOG"
	start_shim "$CTL_A" --slurmrestd.url "http://127.0.0.1:$REST_PORT" --slurmrestd.auth.token-file "$W/token" \
		--slurmrestd.auth.user "$TOKEN_USER" --slurmrestd.jobs --slurmrestd.min-interval 0 \
		--slurmrestd.max-share 0 --slurmrestd.jobs.min-interval 0
	: >"$W/token-seen.txt" # every log line, page and exposition of this part, for the leak check
	for state in valid expired forged empty; do
		case $state in
		expired)
			now=$(date +%s)
			[ $((born + TOKEN_LIFESPAN + 2 - now)) -le 0 ] || sleep $((born + TOKEN_LIFESPAN + 2 - now))
			;;
		forged)
			tok=$(forge)
			TOKENS="$TOKENS $tok"
			printf '%s\n' "$tok" >"$W/token"
			;;
		empty) : >"$W/token" ;;
		esac
		logpos=$(wc -c <"$SHIM_LOG")
		echo
		echo "  -- token $state"
		if [ "$state" = empty ]; then
			echo "  slurmrestd, no token header:"
			rest_codes none
		else
			echo "  slurmrestd, this token:"
			rest_codes "$tok"
		fi
		for _ in 1 2 3; do
			curl -s -m 15 "http://127.0.0.1:$SHIM_PORT/metrics" >"$W/token-metrics.txt" || true
			sleep 1
		done
		echo "  the shim's metrics (last of 3 scrapes):"
		grep -E '^slurm_exporter_shim_(http_status|up)\{endpoint="slurmrestd' "$W/token-metrics.txt" | sed 's/^/    /'
		tail -c +$((logpos + 1)) "$SHIM_LOG" >"$W/token-log.txt"
		echo "  the shim's log lines:"
		sed 's/^/    /' "$W/token-log.txt"
		curl -s -m 5 "http://127.0.0.1:$SHIM_PORT/" >"$W/token-page.html" || true
		# the status page as text: tags become spaces, one table row a line
		sed 's/<\/tr>/\n/g; s/<[^>]*>/ /g; s/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g' "$W/token-page.html" |
			tr -s ' ' | grep -i 'slurmrestd' >"$W/token-page.txt" || true
		echo "  the status page's slurmrestd lines:"
		sed 's/^/    /' "$W/token-page.txt"
		cat "$W/token-log.txt" "$W/token-page.html" "$W/token-metrics.txt" >>"$W/token-seen.txt"
		if [ "$state" = expired ] || [ "$state" = forged ]; then
			named='token.*(expired|rejected|not accepted)'
			# the failures logged in this state; none (the shim logs a failure once, when it
			# begins): the last one logged
			if grep -q 'failed' "$W/token-log.txt"; then
				grep 'failed' "$W/token-log.txt" >"$W/token-failed.txt"
				how="logged now"
			else
				grep 'failed' "$SHIM_LOG" | tail -n 1 >"$W/token-failed.txt"
				how="nothing new logged; the last failure logged"
			fi
			grep -Eqi "$named" "$W/token-failed.txt" && r=0 || r=1
			check "token $state: the log names the token ($how)" "$r"
			grep -Eqi "$named" "$W/token-page.txt" && r=0 || r=1
			check "token $state: the status page names the token" "$r"
		fi
	done
	stop_shim
	kill "$REST_PID" 2>/dev/null || true
	cat "$W/log/shim-token.log" >>"$W/token-seen.txt"
	leak=0
	for t in $TOKENS; do
		# the whole token, and its signature alone
		if grep -qF -e "$t" -e "${t##*.}" "$W/token-seen.txt"; then leak=1; fi
	done
	check "no token string in the shim's log, status page or metrics" $leak
}
want token && token_part

# --- 3. failover and failback -----------------------------------------------------------------
EV=$W/failover/events.txt
ev() {
	echo "$(date +%s.%N) $*" >>"$EV"
	echo "  $(date +%T) $*"
}

# The cycles (called as "cycle_$c"), each ending where it began: ctla primary, ctlb standby.

# hold: keep the phase HOLD s
hold() { sleep "$HOLD"; }

cycle_crash() {
	ev "cycle crash: kill -9 ctla"
	kill -9 "$A_PID"
	wait_codes 000 200 || return 1
	ev "ctlb answers as primary"
	hold
	ev "failback: restart ctla"
	start_controller a
	wait_codes 200 '3??' || return 1
	ev "ctla primary again, ctlb standby"
	hold
}

cycle_takeover() {
	ev "cycle takeover: scontrol takeover"
	slurm scontrol takeover >/dev/null
	# the primary saves its state and exits (REQUEST_SHUTDOWN), the backup takes control at once
	wait_codes 000 200 || return 1
	ev "ctlb answers as primary, ctla stopped"
	hold
	ev "failback: restart ctla"
	wait "$A_PID" 2>/dev/null || true
	start_controller a
	wait_codes 200 '3??' || return 1
	ev "ctla primary again, ctlb standby"
	hold
}

cycle_hang() {
	ev "cycle hang: SIGSTOP ctla"
	kill -STOP "$A_PID"
	wait_codes 000 200 || return 1
	ev "ctlb answers as primary"
	hold
	ev "failback: SIGCONT ctla"
	kill -CONT "$A_PID"
	wait_codes 200 '3??' || return 1
	ev "ctla primary again, ctlb standby"
	hold
}

failover_part() {
	echo
	echo "== 3. failover and failback (cycles: $CYCLES; each phase held $HOLD s)"
	mkdir -p "$W/failover"
	: >"$EV"
	$HELPER mapping "$MAPPING" "$W/failover/mapping.json"
	MAPPING=$W/failover/mapping.json SHIM_LOG_LEVEL=info
	SHIM_PORT=$((BASE_PORT + 10)) SHIM_LOG=$W/log/shim-one.log
	start_shim "$CTL_A"
	one=$SHIM_PID
	SHIM_PORT=$((BASE_PORT + 12)) SHIM_LOG=$W/log/shim-two.log
	start_shim "$CTL_A,$CTL_B"
	two=$SHIM_PID
	SHIM_PORT=$((BASE_PORT + 16)) SHIM_LOG=$W/log/shim-standby.log
	start_shim "$CTL_B"
	standby=$SHIM_PID
	ev "controller a $CTL_A"
	ev "controller b $CTL_B"
	$HELPER watch "$W/failover" "$W/failover/stop" --shim "one-url=http://127.0.0.1:$((BASE_PORT + 10))/metrics" \
		--shim "two-urls=http://127.0.0.1:$((BASE_PORT + 12))/metrics" \
		--shim "one-url-standby=http://127.0.0.1:$((BASE_PORT + 16))/metrics" --ctl "a=$CTL_A" --ctl "b=$CTL_B" &
	watcher=$!
	PIDS="$PIDS $watcher"
	sleep "$WARM"
	ok=0
	for c in $CYCLES; do
		"cycle_$c" || {
			ok=1
			break
		}
	done
	check "every failover cycle reached each of its phases" $ok
	ev "end"
	touch "$W/failover/stop"
	wait "$watcher" || true
	kill -CONT "$A_PID" 2>/dev/null || true
	for p in $one $two $standby; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	echo
	echo "  the shims' log lines (controller URLs as ctla and ctlb, other numbers as N), with their counts:"
	for n in one standby two; do
		echo "  shim-$n:"
		sed -e "s|http://127\.0\.0\.2:$BASE_PORT|ctla|g; s|http://127\.0\.0\.3:$BASE_PORT|ctlb|g" \
			-e 's/[0-9][0-9.]*/N/g' "$W/log/shim-$n.log" | sort | uniq -c | sort -rn | sed 's/^/    /'
	done
	echo
	$HELPER report "$W/failover" "$EV" | tee "$W/failover/report.txt"
	for n in one-url one-url-standby two-urls; do
		mixed=$(awk -v n="$n" '$1 == n { print $2 }' "$W/failover/summary.txt")
		[ "${mixed:-x}" = 0 ] && r=0 || r=1
		check "$n: no scrape mixes controllers (mixing: ${mixed:-none})" "$r"
	done
	slow=$(awk '$3 > 10 { printf "%s %s s ", $1, $3 }' "$W/failover/summary.txt")
	[ -z "$slow" ] && r=0 || r=1
	check "no scrape took longer than its 10 s timeout${slow:+ (over: $slow)}" "$r"
}
want failover && failover_part

echo
if [ "$FAILED" = 0 ]; then
	echo "every check passed"
else
	echo "some checks FAILED"
fi
exit "$FAILED"
